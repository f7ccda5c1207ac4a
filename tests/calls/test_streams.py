"""Reading a provider's event stream on its way through: whole events out of bytes cut anywhere,
and the usage and output that price it."""

import json

import pytest

from calls.streams import (
    StreamMeter,
    event_data,
    is_done,
    is_usage_only,
    sse_events,
    stream_request_body,
)


def chunk(delta=None, usage=None, choices=True) -> bytes:
    body = {"object": "chat.completion.chunk"}
    body["choices"] = [{"index": 0, "delta": delta or {}}] if choices else []
    if usage:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


STREAM = (
    chunk({"role": "assistant", "content": ""})
    + chunk({"content": "Hello"})
    + b": keep-alive\n\n"
    + chunk({"content": " world"})
    + chunk(usage={"prompt_tokens": 9, "completion_tokens": 2}, choices=False)
    + b"data: [DONE]\n\n"
)


@pytest.mark.parametrize("size", [1, 3, 7, 64, len(STREAM)])
def test_events_come_out_whole_however_the_bytes_are_cut(size):
    pieces = [STREAM[start : start + size] for start in range(0, len(STREAM), size)]

    events = list(sse_events(pieces))

    assert b"".join(events) == STREAM
    assert len(events) == 6
    assert is_done(events[-1])


def test_crlf_line_ends_are_read_like_lf():
    events = list(sse_events([b'data: {"a": 1}\r\n\r\ndata: [DONE]\r\n\r\n']))

    assert events == [b'data: {"a": 1}\n\n', b"data: [DONE]\n\n"]


def test_a_last_event_without_its_blank_line_is_completed():
    assert list(sse_events([b"data: x\n\ndata: y"])) == [b"data: x\n\n", b"data: y\n\n"]


def test_multi_line_data_is_joined_as_the_specification_says():
    assert event_data(b'event: message\ndata: {\ndata:  "a": 1}\n\n') == '{\n "a": 1}'


def test_the_meter_keeps_the_usage_and_counts_the_output_relayed():
    meter = StreamMeter()
    for event in sse_events([STREAM]):
        meter.observe(event)

    assert meter.usage == {"prompt_tokens": 9, "completion_tokens": 2}
    assert meter.output_chunks == 2
    assert meter.output_characters == len("Hello world")
    assert meter.relayed_output_tokens() == 3  # 11 characters at four a token, rounded up


def test_tool_call_arguments_count_as_output():
    meter = StreamMeter()
    meter.observe(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": '{"a"'}}]})
    )

    assert meter.relayed_output
    assert meter.output_characters == 5


def test_the_usage_only_chunk_is_recognised():
    usage = json.loads(chunk(usage={"prompt_tokens": 1}, choices=False)[6:])

    assert is_usage_only(usage)
    assert not is_usage_only(json.loads(chunk({"content": "x"}, usage={"a": 1})[6:]))


def test_the_provider_is_asked_for_usage_and_the_callers_own_wish_is_kept():
    sent, wanted = stream_request_body({"stream": True, "stream_options": {"x": 1}})
    assert sent["stream_options"] == {"x": 1, "include_usage": True}
    assert wanted is False

    _, wanted = stream_request_body({"stream": True, "stream_options": {"include_usage": True}})
    assert wanted is True
