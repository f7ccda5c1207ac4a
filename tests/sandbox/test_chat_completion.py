"""Zhipu GLM in the sandbox: OpenAI-compatible chat completions, streaming and embeddings."""

import json

import jsonschema
import pytest

from tests.sandbox.conftest import content_of

CHAT = "/api/paas/v4/chat/completions"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
    },
}
ASKS_FOR_A_TOOL = [{"role": "user", "content": "Please call get_weather for Paris"}]


def _chat(sandbox, **body):
    body.setdefault("model", "glm-4.5")
    body.setdefault("messages", [{"role": "user", "content": "What is a ledger?"}])
    return sandbox.call("zhipu-glm", "POST", CHAT, body=body)


def _events(response) -> list[str]:
    """The data of each server-sent event, in order."""
    text = content_of(response).decode()
    assert text.endswith("\n\n")
    events = text.split("\n\n")[:-1]
    assert all(event.startswith("data: ") for event in events)
    return [event.removeprefix("data: ") for event in events]


def _stream(sandbox, **body) -> list[dict]:
    """The chunks of a streamed completion, checked to end with [DONE]."""
    events = _events(_chat(sandbox, stream=True, **body))
    assert events[-1] == "[DONE]"
    return [json.loads(event) for event in events[:-1]]


def _error(response) -> dict:
    assert response.status_code == 400
    return response.json()["error"]


def test_a_completion_has_the_openai_shape_and_counts_its_tokens(sandbox):
    body = _chat(sandbox).json()
    assert body["object"] == "chat.completion"
    assert body["model"] == "glm-4.5"
    choice = body["choices"][0]
    assert choice["index"] == 0
    assert choice["message"]["role"] == "assistant"
    assert "What is a ledger?" in choice["message"]["content"]
    assert choice["finish_reason"] == "stop"
    usage = body["usage"]
    assert usage["completion_tokens"] == -(-len(choice["message"]["content"]) // 4)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_prompt_tokens_grow_with_the_input(sandbox):
    short = _chat(sandbox).json()["usage"]["prompt_tokens"]
    long_text = "word " * 400
    long = _chat(sandbox, messages=[{"role": "user", "content": long_text}]).json()
    assert long["usage"]["prompt_tokens"] >= short + len(long_text) // 4 - 10


def test_max_tokens_truncates_the_reply_with_finish_reason_length(sandbox):
    body = _chat(sandbox, max_tokens=5).json()
    assert body["usage"]["completion_tokens"] <= 5
    assert body["choices"][0]["finish_reason"] == "length"


def test_the_same_conversation_gets_the_same_reply(sandbox):
    assert _chat(sandbox).content == _chat(sandbox).content
    other = _chat(sandbox, messages=[{"role": "user", "content": "Something else"}])
    assert other.json()["choices"][0]["message"] != _chat(sandbox).json()["choices"][0]["message"]


def test_images_count_as_prompt_tokens(sandbox):
    text_only = _chat(sandbox).json()["usage"]["prompt_tokens"]
    parts = [
        {"type": "text", "text": "What is a ledger?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
    ]
    with_image = _chat(sandbox, model="glm-4v-plus", messages=[{"role": "user", "content": parts}])
    assert with_image.json()["usage"]["prompt_tokens"] > text_only + 200


def test_a_request_for_a_tool_gets_a_tool_call_with_schema_arguments(sandbox):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    messages = [{"role": "user", "content": "Please call get_weather for Paris"}]
    body = _chat(sandbox, messages=messages, tools=tools).json()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}


def test_tools_are_not_called_when_the_message_does_not_ask(sandbox):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    body = _chat(sandbox, tools=tools).json()
    assert body["choices"][0]["finish_reason"] == "stop"


def test_embeddings_are_unit_vectors_of_the_asked_size_with_usage(sandbox):
    response = sandbox.call(
        "zhipu-glm",
        "POST",
        "/api/paas/v4/embeddings",
        body={"model": "embedding-3", "input": ["hello", "world"], "dimensions": 256},
    )
    body = response.json()
    assert [item["index"] for item in body["data"]] == [0, 1]
    vector = body["data"][0]["embedding"]
    assert len(vector) == 256
    assert abs(sum(value * value for value in vector) - 1) < 1e-3
    assert body["usage"]["prompt_tokens"] == 4
    assert body["usage"]["total_tokens"] == 4


def test_a_stream_sends_the_role_then_small_content_deltas_then_the_finish_with_usage(sandbox):
    response = _chat(sandbox, stream=True)
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    chunks = _stream(sandbox)
    whole = _chat(sandbox).json()

    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert {chunk["id"] for chunk in chunks} == {whole["id"]}
    first, *middle, last = chunks
    assert first["choices"] == [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}
    ]
    assert len(middle) >= 20
    for chunk in middle:
        (choice,) = chunk["choices"]
        assert list(choice["delta"]) == ["content"]
        assert 1 <= len(choice["delta"]["content"]) <= 8
        assert choice["finish_reason"] is None
        assert "usage" not in chunk
    assert last["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    assert last["usage"] == whole["usage"]


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"max_tokens": 7},
        {"response_format": {"type": "json_object"}},
        {"messages": [{"role": "user", "content": "Write 20 words, then «ünïcode» and a URL"}]},
    ],
    ids=["prose", "truncated", "json", "unicode"],
)
def test_the_streamed_deltas_concatenate_to_the_json_reply_with_the_same_usage(sandbox, extra):
    chunks = _stream(sandbox, **extra)
    whole = _chat(sandbox, **extra).json()

    text = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks[:-1])
    assert text == whole["choices"][0]["message"]["content"]
    assert chunks[-1]["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"]
    assert chunks[-1]["usage"] == whole["usage"]


def test_streamed_tool_call_deltas_reassemble_to_the_json_tool_call(sandbox):
    chunks = _stream(sandbox, messages=ASKS_FOR_A_TOOL, tools=[WEATHER])
    whole = _chat(sandbox, messages=ASKS_FOR_A_TOOL, tools=[WEATHER]).json()

    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    deltas = [chunk["choices"][0]["delta"]["tool_calls"] for chunk in chunks[1:-1]]
    assert all(len(delta) == 1 for delta in deltas)
    opening, *fragments = [delta[0] for delta in deltas]
    (expected,) = whole["choices"][0]["message"]["tool_calls"]
    assert opening == {
        "index": 0,
        "id": expected["id"],
        "type": "function",
        "function": {"name": "get_weather", "arguments": ""},
    }
    assert len(fragments) > 3
    assert all(set(fragment) == {"index", "function"} for fragment in fragments)
    assert all(list(fragment["function"]) == ["arguments"] for fragment in fragments)
    arguments = "".join(fragment["function"]["arguments"] for fragment in fragments)
    assert {**opening, "function": {"name": "get_weather", "arguments": arguments}} == expected
    assert json.loads(arguments) == {"city": "Paris", "days": 1}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"] == whole["usage"]


def test_include_usage_adds_a_usage_chunk_without_choices_before_done(sandbox):
    chunks = _stream(sandbox, stream_options={"include_usage": True})
    whole = _chat(sandbox).json()

    *deltas, finish, usage = chunks
    assert all(chunk["usage"] is None for chunk in [*deltas, finish])
    assert finish["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    assert usage["choices"] == []
    assert usage["usage"] == whole["usage"]
    text = "".join(chunk["choices"][0]["delta"]["content"] for chunk in deltas)
    assert text == whole["choices"][0]["message"]["content"]


def test_stream_options_without_streaming_are_refused(sandbox):
    response = _chat(sandbox, stream_options={"include_usage": True})
    assert _error(response) == {
        "code": "1210",
        "message": "stream_options is only allowed when stream is true",
    }


@pytest.mark.parametrize(
    ("part", "allowance"),
    [
        ({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, 256),
        ({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}, 384),
        ({"type": "video_url", "video_url": {"url": "https://example.com/a.mp4"}}, 1024),
        ({"type": "file", "file": {"file_id": "file-1"}}, 512),
        ({"type": "file", "file": {"file_data": "JVBERi0=", "filename": "a.pdf"}}, 512),
        ({"type": "file_url", "file_url": {"url": "https://example.com/a.pdf"}}, 512),
    ],
    ids=["image", "audio", "video", "file-id", "file-data", "file-url"],
)
def test_every_kind_of_content_part_is_accepted_and_counted_with_its_allowance(
    sandbox, part, allowance
):
    question = {"type": "text", "text": "What is a ledger?"}
    alone = _chat(sandbox, messages=[{"role": "user", "content": [question]}])
    both = _chat(sandbox, messages=[{"role": "user", "content": [question, part]}])

    assert both.status_code == 200
    assert both.json()["usage"]["prompt_tokens"] == alone.json()["usage"]["prompt_tokens"] + (
        allowance
    )


@pytest.mark.parametrize(
    ("part", "error"),
    [
        (
            {"type": "audio_url", "audio_url": {"url": "https://example.com/a.mp3"}},
            {
                "code": "1210",
                "message": "messages[0].content[1].type must be one of text, image_url, "
                "input_audio, video_url, file, file_url (got 'audio_url')",
            },
        ),
        ("just text", {"code": "1210", "message": "messages[0].content[1] must be an object"}),
        (
            {"type": "image_url", "image_url": {}},
            {"code": "1214", "message": "messages[0].content[1].image_url.url is required"},
        ),
        (
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "ogg"}},
            {
                "code": "1210",
                "message": "messages[0].content[1].input_audio.format must be one of wav, mp3",
            },
        ),
        (
            {"type": "file", "file": {"filename": "a.pdf"}},
            {
                "code": "1214",
                "message": "messages[0].content[1].file.file_id or "
                "messages[0].content[1].file.file_data is required",
            },
        ),
    ],
    ids=["unknown-type", "not-an-object", "no-url", "audio-format", "no-file"],
)
def test_an_invalid_content_part_is_refused_in_the_providers_format(sandbox, part, error):
    parts = [{"type": "text", "text": "Hi"}, part]
    response = _chat(sandbox, messages=[{"role": "user", "content": parts}])
    assert _error(response) == error


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"temperature": 2.5}, "temperature must be at most 2 (got 2.5)"),
        ({"temperature": -0.1}, "temperature must be at least 0 (got -0.1)"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"top_p": 1.5}, "top_p must be at most 1 (got 1.5)"),
        ({"max_tokens": 0}, "max_tokens must be at least 1 (got 0)"),
        ({"max_completion_tokens": 0}, "max_completion_tokens must be at least 1 (got 0)"),
        ({"messages": []}, "messages must contain at least 1 item(s)"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content must be a string"),
        ({"response_format": {"type": "yaml"}}, "response_format.type must be one of"),
    ],
)
def test_out_of_range_parameters_are_refused_in_the_providers_format(sandbox, body, message):
    error = _error(_chat(sandbox, **body))
    assert error["code"] == "1210"
    assert error["message"].startswith(message)


def test_a_request_without_messages_is_refused(sandbox):
    response = sandbox.call("zhipu-glm", "POST", CHAT, body={"model": "glm-4.5"})
    assert _error(response) == {"code": "1214", "message": "messages is required"}


def test_temperatures_up_to_two_are_accepted_and_change_the_reply(sandbox):
    replies = {
        _chat(sandbox, temperature=value).json()["choices"][0]["message"]["content"]
        for value in (0.2, 1.5, 2)
    }
    assert len(replies) == 3


def test_at_temperature_zero_top_p_does_not_change_the_reply(sandbox):
    greedy = [
        _chat(sandbox, temperature=0, top_p=value).json()["choices"][0]["message"]
        for value in (0.1, 0.9)
    ]
    sampled = [
        _chat(sandbox, temperature=0.8, top_p=value).json()["choices"][0]["message"]
        for value in (0.1, 0.9)
    ]
    assert greedy[0] == greedy[1]
    assert sampled[0] != sampled[1]


def test_the_length_limit_truncates_the_same_reply(sandbox):
    whole = _chat(sandbox).json()["choices"][0]["message"]["content"]
    for limit in ({"max_tokens": 6}, {"max_completion_tokens": 6}):
        body = _chat(sandbox, **limit).json()
        assert body["choices"][0]["message"]["content"] == whole[:24]
        assert body["choices"][0]["finish_reason"] == "length"
        assert body["usage"]["completion_tokens"] == 6


def test_tool_choice_none_answers_in_text_even_when_a_tool_is_asked_for(sandbox):
    body = _chat(sandbox, messages=ASKS_FOR_A_TOOL, tools=[WEATHER], tool_choice="none").json()
    assert body["choices"][0]["finish_reason"] == "stop"
    assert "tool_calls" not in body["choices"][0]["message"]


def test_tool_choice_required_calls_a_tool_the_message_does_not_ask_for(sandbox):
    body = _chat(sandbox, tools=[TIME, WEATHER], tool_choice="required").json()
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_time"


def test_once_the_tool_has_answered_the_reply_is_text(sandbox):
    asked = _chat(sandbox, messages=ASKS_FOR_A_TOOL, tools=[WEATHER]).json()
    (call,) = asked["choices"][0]["message"]["tool_calls"]
    result = {"role": "tool", "tool_call_id": call["id"], "content": '{"temperature_c": 18}'}
    messages = [*ASKS_FOR_A_TOOL, asked["choices"][0]["message"], result]

    body = _chat(sandbox, messages=messages, tools=[WEATHER]).json()
    assert body["choices"][0]["finish_reason"] == "stop"
    assert "Please call get_weather for Paris" in body["choices"][0]["message"]["content"]
    forced = _chat(sandbox, messages=messages, tools=[WEATHER], tool_choice="required").json()
    assert forced["choices"][0]["finish_reason"] == "tool_calls"


def test_a_named_tool_choice_calls_that_function(sandbox):
    choice = {"type": "function", "function": {"name": "get_weather"}}
    body = _chat(sandbox, tools=[TIME, WEATHER], tool_choice=choice).json()
    (call,) = body["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert set(json.loads(call["function"]["arguments"])) == {"city", "days"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "x"}}},
            "tool_choice names the function 'x', not among tools",
        ),
        ({"tool_choice": "required"}, "tool_choice required needs at least one function tool"),
        ({"tools": [WEATHER], "tool_choice": "always"}, 'tool_choice must be "none", "auto"'),
        ({"tools": [{"type": "function", "function": {}}]}, "tools[0].function.name is required"),
    ],
)
def test_a_tool_choice_or_tool_the_provider_cannot_honour_is_refused(sandbox, body, message):
    assert _error(_chat(sandbox, **body))["message"].startswith(message)


def test_json_object_mode_answers_a_json_object(sandbox):
    body = _chat(sandbox, response_format={"type": "json_object"}).json()
    answer = json.loads(body["choices"][0]["message"]["content"])
    assert "What is a ledger?" in answer["answer"]


def test_json_schema_mode_answers_a_document_of_the_schema(sandbox):
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 30},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "rank": {"type": "integer", "minimum": 1, "maximum": 5},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "kind": {"type": "string", "enum": ["asset", "liability"]},
            "due": {"type": "string", "format": "date"},
            "owner": {"$ref": "#/$defs/person"},
            "note": {"type": ["string", "null"]},
        },
        "required": ["title", "score", "rank", "tags", "kind", "due", "owner", "note"],
        "additionalProperties": False,
        "$defs": {
            "person": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "active": {"type": "boolean"}},
                "required": ["name", "active"],
                "additionalProperties": False,
            }
        },
    }
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": "entry", "schema": schema, "strict": True},
    }
    plain = _chat(sandbox).json()
    body = _chat(sandbox, response_format=response_format).json()

    document = json.loads(body["choices"][0]["message"]["content"])
    jsonschema.validate(document, schema, format_checker=jsonschema.FormatChecker())
    assert body["usage"]["prompt_tokens"] > plain["usage"]["prompt_tokens"] + 50
    chunks = _stream(sandbox, response_format=response_format)
    streamed = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks)
    assert streamed == body["choices"][0]["message"]["content"]


def test_a_json_schema_format_needs_a_name(sandbox):
    response_format = {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}
    assert _error(_chat(sandbox, response_format=response_format)) == {
        "code": "1214",
        "message": "response_format.json_schema.name is required",
    }
