"""Zhipu GLM in the sandbox: OpenAI-compatible chat completions, streaming and embeddings."""

import json

from tests.sandbox.conftest import content_of

CHAT = "/api/paas/v4/chat/completions"


def _chat(sandbox, **body):
    body.setdefault("model", "glm-4.5")
    body.setdefault("messages", [{"role": "user", "content": "What is a ledger?"}])
    return sandbox.call("zhipu-glm", "POST", CHAT, body=body)


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


def test_streaming_sends_server_sent_events_ending_with_done(sandbox):
    response = _chat(sandbox, stream=True)
    assert response["Content-Type"] == "text/event-stream"
    events = content_of(response).decode().split("\n\n")
    assert events[-1] == ""
    assert events[-2] == "data: [DONE]"
    chunks = [json.loads(event.removeprefix("data: ")) for event in events[:-2]]
    assert all(chunk["object"] == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks)
    whole = _chat(sandbox).json()
    assert text == whole["choices"][0]["message"]["content"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["usage"] == whole["usage"]


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
