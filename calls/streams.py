"""Streamed chat completions: the provider's server-sent events, split into whole events as they
arrive and read on the way through for what the call costs.

A streamed answer is relayed event by event, never buffered whole. The gateway asks the provider
to report usage in its last chunk (OpenAI's ``stream_options.include_usage``) and prices the
call from it; that extra usage chunk reaches the caller only when the caller asked for it too.
A stream that ends without usage (the provider broke off, or the caller went away) is priced
from what was relayed: the input estimate the hold was reserved on plus the output relayed so
far (a token per four characters, at least one per chunk that carried output). Either way the
price never exceeds the hold.
"""

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.http import StreamingHttpResponse

from gateway.money import micros_to_cents

EVENT_STREAM = "text/event-stream"
DONE = b"data: [DONE]\n\n"
CHARACTERS_PER_OUTPUT_TOKEN = 4


def is_stream_request(body: Any) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


def stream_request_body(body: dict) -> tuple[dict, bool]:
    """The body sent to the provider (usage asked for in the last chunk), and whether the
    caller asked for that usage chunk itself."""
    options = body.get("stream_options")
    options = options if isinstance(options, dict) else {}
    wanted = options.get("include_usage") is True
    return {**body, "stream_options": {**options, "include_usage": True}}, wanted


class EventSplitter:
    """Whole events (each ending in a blank line) out of a byte stream cut anywhere. Line ends
    are normalised to LF; a last event without its blank line is completed by ``end``."""

    def __init__(self):
        self.pending = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self.pending += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events = []
        while (end := self.pending.find(b"\n\n")) >= 0:
            event, self.pending = self.pending[: end + 2], self.pending[end + 2 :]
            if event.strip():
                events.append(event)
        return events

    def end(self) -> list[bytes]:
        rest, self.pending = self.pending, b""
        return [rest.rstrip(b"\n") + b"\n\n"] if rest.strip() else []


def sse_events(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The events of a byte stream, one by one (see EventSplitter)."""
    splitter = EventSplitter()
    for chunk in chunks:
        yield from splitter.feed(chunk)
    yield from splitter.end()


def event_data(event: bytes) -> str:
    """The event's data field: its ``data:`` lines joined, as the SSE specification reads them."""
    lines = []
    for line in event.decode("utf-8", "replace").split("\n"):
        if line.startswith("data:"):
            value = line[5:]
            lines.append(value[1:] if value.startswith(" ") else value)
    return "\n".join(lines)


def is_done(event: bytes) -> bool:
    return event_data(event).strip() == "[DONE]"


def comment(text: str) -> bytes:
    """An SSE comment line: every event-stream reader skips it (the openai SDK included)."""
    return b"".join(b": " + line.encode() + b"\n" for line in text.split("\n")) + b"\n"


def error_event(message: str) -> bytes:
    """An error mid-stream, in the shape OpenAI-compatible clients raise from."""
    error = {"error": {"message": message, "type": "upstream_error", "code": "UPSTREAM_ERROR"}}
    return b"data: " + json.dumps(error).encode() + b"\n\n"


@dataclass
class StreamMeter:
    """What has gone through a stream: the provider's usage if it reported it, and the output
    relayed so far."""

    usage: dict | None = None
    output_chunks: int = 0
    output_characters: int = 0

    def observe(self, event: bytes) -> dict | None:
        """Read one event; returns its JSON object (None when it is not one)."""
        try:
            chunk = json.loads(event_data(event))
        except ValueError:
            return None
        if not isinstance(chunk, dict):
            return None
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        characters = sum(_output_characters(choice) for choice in _choices(chunk))
        if characters:
            self.output_chunks += 1
            self.output_characters += characters
        return chunk

    @property
    def relayed_output(self) -> bool:
        return self.output_chunks > 0

    def relayed_output_tokens(self) -> int:
        return max(
            self.output_chunks, math.ceil(self.output_characters / CHARACTERS_PER_OUTPUT_TOKEN)
        )


def is_usage_only(chunk: dict | None) -> bool:
    """OpenAI's extra last chunk: no choices, only usage."""
    return isinstance(chunk, dict) and chunk.get("choices") == [] and "usage" in chunk


def _choices(chunk: dict) -> list:
    choices = chunk.get("choices")
    return (
        [choice for choice in choices if isinstance(choice, dict)]
        if isinstance(choices, list)
        else []
    )


def _output_characters(choice: dict) -> int:
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return 0
    total = 0
    for name in ("content", "reasoning_content", "refusal"):
        if isinstance(delta.get(name), str):
            total += len(delta[name])
    for call in delta.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            total += len(str(function.get("name") or ""))
            total += len(str(function.get("arguments") or ""))
    return total


def event_stream_response(
    *, events: Iterator[bytes], request_id: str, quote_micros: int
) -> StreamingHttpResponse:
    """The HTTP answer that relays ``events``: uncached, and unbuffered by proxies (nginx reads
    X-Accel-Buffering). Its headers carry the request id and the most the call can cost."""
    response = StreamingHttpResponse(events, content_type=EVENT_STREAM)
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"
    response["X-Request-Id"] = request_id
    response["X-Price-Max-Cents"] = f"{micros_to_cents(quote_micros):g}"
    return response
