"""Zhipu GLM: OpenAI-compatible chat completions (JSON or server-sent events) and embeddings.

Tokens are estimated as one per four characters (at least one per message part); images, audio,
videos and files in a message add a fixed allowance each. The reply is derived from the last
user message, and ``max_tokens`` (or ``max_completion_tokens``) truncates it with
``finish_reason`` ``length``. When tools are offered and the user asks to call, use or run one
(or names it), or ``tool_choice`` asks for one, the reply is a tool call with arguments filled
from the function's JSON schema; once a tool's result is the last message, the reply is text
(unless ``tool_choice`` forces a call). ``response_format`` ``json_object`` answers a JSON object
and ``json_schema`` a document of the given schema.

A stream sends the same reply as the JSON answer, a token or so per chunk, as OpenAI-compatible
providers do: the role first, then the content (or the tool call: its name, then fragments of its
arguments), then the finish reason with the usage (Zhipu's way), or with ``stream_options:
{include_usage: true}`` a last chunk with no choices and the usage (OpenAI's way).
"""

import json
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from django.http import StreamingHttpResponse

from sandbox.call import Call, stable_hash
from sandbox.errors import invalid, missing
from sandbox.generators.words import sentence
from sandbox.handlers.registry import handles

CREATED_BASE = 1735689600  # fixed, so identical requests get identical answers
DEFAULT_MAX_TOKENS = 1024
# Fixed prompt allowances of non-text content parts, by part type.
PART_TOKENS = {
    "image_url": 256,
    "input_audio": 384,
    "video_url": 1024,
    "file": 512,
    "file_url": 512,
}
# Where each part type carries its content, and which of its fields must be there.
PART_FIELDS = {
    "text": ("text", ()),
    "image_url": ("image_url", ("url",)),
    "input_audio": ("input_audio", ("data", "format")),
    "video_url": ("video_url", ("url",)),
    "file": ("file", ()),
    "file_url": ("file_url", ("url",)),
}
AUDIO_FORMATS = ("wav", "mp3")
TOOL_WORDS = ("call", "use", "run", "invoke", "tool", "function", "lookup", "look up")
TOOL_CHOICES = ("none", "auto", "required")
# Body fields that do not change what the model writes: how it is delivered, how much of it is
# kept, and the caller's own labels.
NOT_IN_REPLY = frozenset(
    {"stream", "stream_options", "max_tokens", "max_completion_tokens", "request_id", "user_id"}
)
# A stream sends about one token per chunk: a word, a run of punctuation, and the whitespace
# before it, cut at a few characters.
_TOKEN = re.compile(r"\s*(?:\w+|[^\w\s]+)|\s+")
MAX_CHUNK_CHARS = 8
MAX_SCHEMA_DEPTH = 8
# Strings of a json_schema reply whose format a caller's parser checks.
STRING_FORMATS = {
    "date": "2025-01-01",
    "date-time": "2025-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "jane.doe@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}

# Where the provider accepts more than the catalog states: OpenAI's temperature range, tool_choice
# as "none", "required" or a named function (checked in the handler), response_format's
# json_schema, max_completion_tokens and stream_options.
BODY_PROPERTIES = {
    "temperature": {"type": "number", "minimum": 0, "maximum": 2},
    "tool_choice": {},
    "max_completion_tokens": {"type": "integer", "minimum": 1},
    "response_format": {
        "type": "object",
        "required": ["type"],
        "properties": {
            "type": {"type": "string", "enum": ["text", "json_object", "json_schema"]},
            "json_schema": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "maxLength": 64},
                    "schema": {"type": "object"},
                    "strict": {"type": "boolean"},
                },
            },
        },
    },
    "stream_options": {"type": "object", "properties": {"include_usage": {"type": "boolean"}}},
}


def tokens_of(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass(frozen=True)
class ChatRequest:
    messages: list
    tools: list
    tool_choice: str | dict
    max_tokens: int
    response_format: dict
    stream: bool
    include_usage: bool


def _checked_part(part, name: str) -> None:
    if not isinstance(part, dict):
        raise invalid(name, f"{name} must be an object")
    kind = part.get("type")
    if kind is None:
        raise missing(f"{name}.type")
    if kind not in PART_FIELDS:
        raise invalid(
            f"{name}.type",
            f"{name}.type must be one of {', '.join(PART_FIELDS)} (got {kind!r})",
        )
    field, required = PART_FIELDS[kind]
    value = part.get(field)
    if value is None:
        raise missing(f"{name}.{field}")
    if kind == "text":
        if not isinstance(value, str):
            raise invalid(f"{name}.text", f"{name}.text must be a string")
        return
    if not isinstance(value, dict):
        raise invalid(f"{name}.{field}", f"{name}.{field} must be an object")
    for key in required:
        if not value.get(key):
            raise missing(f"{name}.{field}.{key}")
    if kind == "input_audio" and value["format"] not in AUDIO_FORMATS:
        raise invalid(
            f"{name}.input_audio.format",
            f"{name}.input_audio.format must be one of {', '.join(AUDIO_FORMATS)}",
        )
    if kind == "file" and not (value.get("file_id") or value.get("file_data")):
        raise missing(f"{name}.file.file_id or {name}.file.file_data")


def _checked_messages(messages: list) -> None:
    for index, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list):
            for position, part in enumerate(content):
                _checked_part(part, f"messages[{index}].content[{position}]")
        elif content is not None and not isinstance(content, str):
            raise invalid(
                f"messages[{index}].content",
                f"messages[{index}].content must be a string or an array of content parts",
            )


def _functions(tools: list) -> list[dict]:
    return [
        tool["function"]
        for tool in tools
        if tool.get("type", "function") == "function" and isinstance(tool.get("function"), dict)
    ]


def _checked_tools(tools: list) -> None:
    for index, tool in enumerate(tools):
        if tool.get("type", "function") != "function":
            continue  # Zhipu's web_search and retrieval tools, which the sandbox never calls
        function = tool.get("function")
        if not isinstance(function, dict):
            raise missing(f"tools[{index}].function")
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise missing(f"tools[{index}].function.name")


def _checked_tool_choice(choice, tools: list) -> str | dict:
    names = [function["name"] for function in _functions(tools)]
    if isinstance(choice, str) and choice in TOOL_CHOICES:
        if choice == "required" and not names:
            raise invalid("tool_choice", "tool_choice required needs at least one function tool")
        return choice
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if choice.get("type") == "function" and isinstance(name, str):
            if name not in names:
                raise invalid(
                    "tool_choice", f"tool_choice names the function {name!r}, not among tools"
                )
            return choice
    raise invalid(
        "tool_choice",
        'tool_choice must be "none", "auto", "required" or '
        '{"type": "function", "function": {"name": ...}}',
    )


def chat_request(body: dict) -> ChatRequest:
    """The request as the model reads it, refusing what the provider refuses (the catalog's
    schema and BODY_PROPERTIES were checked before)."""
    messages = body["messages"]
    _checked_messages(messages)
    tools = body.get("tools") or []
    _checked_tools(tools)
    stream = bool(body.get("stream"))
    if body.get("stream_options") is not None and not stream:
        raise invalid("stream_options", "stream_options is only allowed when stream is true")
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
    return ChatRequest(
        messages=messages,
        tools=tools,
        tool_choice=_checked_tool_choice(body.get("tool_choice") or "auto", tools),
        max_tokens=limit,
        response_format=body.get("response_format") or {"type": "text"},
        stream=stream,
        include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
    )


def _parts(content) -> tuple[str, int]:
    """(text of a message's content, tokens of its other parts)."""
    if isinstance(content, str):
        return content, 0
    text, extra = [], 0
    for part in content if isinstance(content, list) else []:
        if part["type"] == "text":
            text.append(part["text"])
        else:
            extra += PART_TOKENS[part["type"]]
    return " ".join(text), extra


def prompt_tokens(chat: ChatRequest) -> int:
    total = 0
    for message in chat.messages:
        text, extra = _parts(message.get("content"))
        total += 4 + tokens_of(text) + extra  # 4 tokens of role and separators per message
        if message.get("tool_calls"):
            total += tokens_of(json.dumps(message["tool_calls"]))
    if chat.tools:
        total += tokens_of(json.dumps(chat.tools))
    schema = (chat.response_format.get("json_schema") or {}).get("schema")
    if chat.response_format.get("type") == "json_schema" and schema:
        total += tokens_of(json.dumps(schema))
    return total + 2


def _last_user_text(messages: list) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return _parts(message.get("content"))[0]
    return ""


def _example(schema: dict, name: str, text: str):
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return [_example(schema.get("items") or {}, name, text)]
    if kind == "object":
        return _arguments(schema, text)
    words = [word for word in text.replace("?", " ").split() if word[:1].isupper()]
    return words[-1] if words else text[:40] or name


def _arguments(schema: dict, text: str) -> dict:
    properties = schema.get("properties") or {}
    names = schema.get("required") or list(properties)[:1]
    return {name: _example(properties.get(name) or {}, name, text) for name in names}


def _chosen_function(chat: ChatRequest, text: str) -> dict | None:
    functions = _functions(chat.tools)
    if chat.tool_choice == "none" or not functions:
        return None
    if isinstance(chat.tool_choice, dict):
        name = chat.tool_choice["function"]["name"]
        return next(function for function in functions if function["name"] == name)
    if chat.tool_choice == "auto" and chat.messages[-1].get("role") == "tool":
        return None  # the tool has answered: the model now answers the user with its result
    lowered = text.lower()
    named = [f for f in functions if f["name"].lower() in lowered.replace(" ", "_")]
    if named:
        return named[0]
    if chat.tool_choice == "required" or any(word in lowered for word in TOOL_WORDS):
        return functions[0]
    return None


def _tool_call(function: dict, text: str, seed: int) -> dict:
    return {
        "id": f"call_{seed:016x}"[:29],
        "type": "function",
        "index": 0,
        "function": {
            "name": function["name"],
            "arguments": json.dumps(_arguments(function.get("parameters") or {}, text)),
        },
    }


def _resolved(schema: dict, root: dict) -> dict:
    reference = schema.get("$ref")
    if not isinstance(reference, str) or not reference.startswith("#/"):
        return schema
    target = root
    for part in reference[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None
    return target if isinstance(target, dict) else {}


def _instance(schema: dict, root: dict, rng: random.Random, topic: str, depth: int = 0):
    """A value of the schema (every property of an object, as strict mode asks)."""
    schema = _resolved(schema, root)
    if depth > MAX_SCHEMA_DEPTH:
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return _instance(options[0], root, rng, topic, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((option for option in kind if option != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        return {
            name: _instance(sub, root, rng, topic, depth + 1) for name, sub in properties.items()
        }
    if kind == "array":
        count = min(max(schema.get("minItems", 1), 1), schema.get("maxItems", 1_000))
        item = schema.get("items") or {}
        return [_instance(item, root, rng, topic, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        high = schema.get("maximum")
        low = schema.get("minimum", 0 if high is None else min(0, high))
        high = low + 100 if high is None else high
        if kind == "integer":
            return rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
        return min(max(round(rng.uniform(low, high), 2), low), high)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if schema.get("format") in STRING_FORMATS:
        return STRING_FORMATS[schema["format"]]
    text = sentence(rng, topic)
    return text[: schema["maxLength"]] if "maxLength" in schema else text


def _reply_text(chat: ChatRequest, text: str, rng: random.Random) -> str:
    topic = " ".join(text.split()[:12])
    body = " ".join(sentence(rng, topic) for _ in range(rng.randint(2, 4)))
    answer = f'Sandbox reply to "{topic}": {body}' if topic else body
    kind = chat.response_format.get("type")
    schema = (chat.response_format.get("json_schema") or {}).get("schema")
    if kind == "json_schema" and schema:
        return json.dumps(_instance(schema, schema, rng, topic))
    if kind in ("json_object", "json_schema"):
        return json.dumps({"answer": answer})
    return answer


def _reply_seed(slug: str, body: dict) -> int:
    """One conversation gets one reply, streamed or not and whatever its length limit; sampling
    is greedy at temperature 0 or with do_sample false, so top_p cannot change it then."""
    ignored = set(NOT_IN_REPLY)
    if body.get("temperature") == 0 or body.get("do_sample") is False:
        ignored.update(("temperature", "top_p"))
    return stable_hash(slug, {key: value for key, value in body.items() if key not in ignored})


def _completion(call: Call, chat: ChatRequest) -> dict:
    body = call.body
    text = _last_user_text(chat.messages)
    seed = _reply_seed(call.slug, body)
    function = _chosen_function(chat, text)
    finish = "stop"
    if function:
        tool_call = _tool_call(function, text, seed)
        completion = tokens_of(tool_call["function"]["arguments"]) + 8
        message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        finish = "tool_calls"
    else:
        content = _reply_text(chat, text, random.Random(seed))
        if tokens_of(content) > chat.max_tokens:
            content, finish = content[: chat.max_tokens * 4], "length"
        completion = tokens_of(content)
        message = {"role": "assistant", "content": content}
    completion = min(completion, chat.max_tokens)
    prompt = prompt_tokens(chat)
    return {
        "id": f"{seed:020d}"[:20],
        "request_id": body.get("request_id") or f"sandbox-{seed:016x}",
        "object": "chat.completion",
        "created": CREATED_BASE + seed % 10_000_000,
        "model": body.get("model") or "glm-4.5",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def token_pieces(text: str) -> Iterator[str]:
    """text in stream-sized pieces whose concatenation is text."""
    for found in _TOKEN.finditer(text):
        piece = found.group()
        for start in range(0, len(piece), MAX_CHUNK_CHARS):
            yield piece[start : start + MAX_CHUNK_CHARS]


def _deltas(message: dict) -> Iterator[dict]:
    yield {"role": "assistant", "content": ""}
    for call in message.get("tool_calls") or []:
        function = call["function"]
        yield {
            "tool_calls": [
                {
                    "index": call["index"],
                    "id": call["id"],
                    "type": call["type"],
                    "function": {"name": function["name"], "arguments": ""},
                }
            ]
        }
        for piece in token_pieces(function["arguments"]):
            yield {"tool_calls": [{"index": call["index"], "function": {"arguments": piece}}]}
    for piece in token_pieces(message.get("content") or ""):
        yield {"content": piece}


def _events(completion: dict, include_usage: bool) -> Iterator[bytes]:
    base = {key: completion[key] for key in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]

    def event(choices: list, usage=None) -> bytes:
        chunk = {**base, "choices": choices}
        if include_usage or usage:
            # With include_usage, OpenAI sends usage on every chunk: null until the last.
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"

    for delta in _deltas(choice["message"]):
        yield event([{"index": 0, "delta": delta, "finish_reason": None}])
    finish = [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]
    if include_usage:
        yield event(finish)
        yield event([], completion["usage"])
    else:
        yield event(finish, completion["usage"])
    yield b"data: [DONE]\n\n"


@handles("zhipu-glm", "POST", "/api/paas/v4/chat/completions", body_properties=BODY_PROPERTIES)
def chat_completion(call: Call):
    chat = chat_request(call.body)
    completion = _completion(call, chat)
    if chat.stream:
        response = StreamingHttpResponse(
            _events(completion, chat.include_usage), content_type="text/event-stream"
        )
        response["Cache-Control"] = "no-cache"
        return response
    return completion


def _vector(text: str, dimensions: int) -> list[float]:
    rng = random.Random(stable_hash("embedding", text))
    values = [rng.gauss(0, 1) for _ in range(dimensions)]
    norm = math.sqrt(sum(value * value for value in values)) or 1.0
    return [round(value / norm, 6) for value in values]


@handles("zhipu-glm", "POST", "/api/paas/v4/embeddings")
def embeddings(call: Call):
    texts = call.body.get("input")
    texts = [texts] if isinstance(texts, str) else [str(text) for text in texts or []]
    dimensions = int(call.body.get("dimensions") or 2048)
    tokens = sum(tokens_of(text) for text in texts)
    return {
        "model": call.body.get("model") or "embedding-3",
        "object": "list",
        "data": [
            {"index": index, "object": "embedding", "embedding": _vector(text, dimensions)}
            for index, text in enumerate(texts)
        ],
        "usage": {"prompt_tokens": tokens, "completion_tokens": 0, "total_tokens": tokens},
    }
