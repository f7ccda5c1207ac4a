"""Zhipu GLM: OpenAI-compatible chat completions (JSON or server-sent events) and embeddings.

Tokens are estimated as one per four characters (at least one per message part), the reply is
derived from the last user message, and ``max_tokens`` truncates it with ``finish_reason``
``length``. When tools are offered and the user asks to call, use or run one (or names it), the
reply is a tool call with arguments filled from the function's JSON schema.
"""

import json
import math
import random

from django.http import StreamingHttpResponse

from sandbox.call import Call, stable_hash
from sandbox.generators.words import sentence
from sandbox.handlers.registry import handles

CREATED_BASE = 1735689600  # fixed, so identical requests get identical answers
IMAGE_TOKENS = 256
VIDEO_TOKENS = 1024
TOOL_WORDS = ("call", "use", "run", "invoke", "tool", "function", "lookup", "look up")


def tokens_of(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _parts(content) -> tuple[str, int]:
    """(text of a message's content, extra tokens for its images and videos)."""
    if isinstance(content, str):
        return content, 0
    text, extra = [], 0
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            text.append(str(part.get("text", "")))
        elif kind == "image_url":
            extra += IMAGE_TOKENS
        elif kind == "video_url":
            extra += VIDEO_TOKENS
        elif kind == "file_url":
            extra += IMAGE_TOKENS
    return " ".join(text), extra


def prompt_tokens(messages: list, tools: list | None) -> int:
    total = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        text, extra = _parts(message.get("content"))
        total += 4 + tokens_of(text) + extra  # 4 tokens of role and separators per message
        if message.get("tool_calls"):
            total += tokens_of(json.dumps(message["tool_calls"]))
    if tools:
        total += tokens_of(json.dumps(tools))
    return total + 2


def _last_user_text(messages: list) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
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


def _tool_call(tools: list, text: str, seed: int) -> dict | None:
    functions = [
        tool.get("function") or {}
        for tool in tools
        if isinstance(tool, dict) and tool.get("type", "function") == "function"
    ]
    functions = [function for function in functions if function.get("name")]
    lowered = text.lower()
    named = [f for f in functions if f["name"].lower() in lowered.replace(" ", "_")]
    if not named and not any(word in lowered for word in TOOL_WORDS):
        return None
    chosen = (named or functions or [None])[0]
    if chosen is None:
        return None
    return {
        "id": f"call_{seed:016x}"[:29],
        "type": "function",
        "index": 0,
        "function": {
            "name": chosen["name"],
            "arguments": json.dumps(_arguments(chosen.get("parameters") or {}, text)),
        },
    }


def _reply_text(text: str, rng: random.Random, json_mode: bool) -> str:
    topic = " ".join(text.split()[:12])
    body = " ".join(sentence(rng, topic) for _ in range(rng.randint(2, 4)))
    answer = f'Sandbox reply to "{topic}": {body}' if topic else body
    return json.dumps({"answer": answer}) if json_mode else answer


def _completion(call: Call) -> dict:
    body = call.body
    messages = body.get("messages") or []
    tools = body.get("tools") or None
    max_tokens = int(body.get("max_tokens") or 1024)
    text = _last_user_text(messages)
    # Streaming or not, one conversation gets one reply.
    seed = stable_hash(call.slug, {key: value for key, value in body.items() if key != "stream"})
    json_mode = (body.get("response_format") or {}).get("type") == "json_object"
    tool_call = _tool_call(tools, text, seed) if tools else None
    finish = "stop"
    if tool_call:
        content, completion = None, tokens_of(tool_call["function"]["arguments"]) + 8
        message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        finish = "tool_calls"
    else:
        content = _reply_text(text, random.Random(seed), json_mode)
        if tokens_of(content) > max_tokens:
            content, finish = content[: max_tokens * 4], "length"
        completion = tokens_of(content)
        message = {"role": "assistant", "content": content}
    completion = min(completion, max_tokens)
    prompt = prompt_tokens(messages, tools)
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


def _events(completion: dict):
    base = {key: completion[key] for key in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]

    def event(delta: dict, finish=None, usage=None) -> bytes:
        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        if usage:
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    yield event({"role": "assistant", "content": ""})
    if message.get("tool_calls"):
        yield event({"tool_calls": message["tool_calls"]})
    else:
        words = message["content"].split(" ")
        for start in range(0, len(words), 4):
            piece = " ".join(words[start : start + 4])
            yield event({"content": piece if start == 0 else " " + piece})
    yield event({}, choice["finish_reason"], completion["usage"])
    yield b"data: [DONE]\n\n"


@handles("zhipu-glm", "POST", "/api/paas/v4/chat/completions")
def chat_completion(call: Call):
    completion = _completion(call)
    if call.body.get("stream"):
        response = StreamingHttpResponse(_events(completion), content_type="text/event-stream")
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
