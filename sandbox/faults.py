"""Fault injection: make the sandbox fail on purpose for tests and benchmarks.

Every knob is read from a query parameter, an ``X-Sandbox-*`` header or, on JSON POST bodies,
a top-level body field (the gateway's run endpoint forwards only query and body):

=======================  ===========================  ============================================
query / body field       header                       meaning
=======================  ===========================  ============================================
sandbox_fault            X-Sandbox-Fault              delay, timeout, reset, stall, oversize,
                                                      badjson, empty, or an HTTP error status
                                                      (429, 500, 503, any 4xx/5xx)
sandbox_delay_ms         X-Sandbox-Delay-Ms           sleep this long first (capped at 30 s)
sandbox_retry_after      X-Sandbox-Retry-After        Retry-After seconds of a 429 (default 1)
sandbox_size_mb          X-Sandbox-Size-Mb            size of the oversize body in MiB (default 11)
sandbox_fail_times       X-Sandbox-Fail-Times         fault only the first N requests of a key
sandbox_fault_key        X-Sandbox-Fault-Key          the key those N are counted under (default:
                                                      the request itself)
sandbox_chunk_delay_ms   X-Sandbox-Chunk-Delay-Ms     sleep this long between the chunks of a
                                                      streamed answer (capped at 1000 ms)
sandbox_after_chunks     X-Sandbox-After-Chunks       with reset or stall: send N chunks of the
                                                      streamed answer first (a 400 on an answer
                                                      that is not streamed)
=======================  ===========================  ============================================

``reset`` aborts the connection with a TCP RST: before the answer, or with
``sandbox_after_chunks=N`` once N chunks have reached the client. ``stall`` sends nothing for
``TIMEOUT_SLEEP_SECONDS`` (a client's read timeout fires) and then ends the answer: an empty 200,
or with ``sandbox_after_chunks=N`` the stream cut after N chunks (no ``[DONE]``). A stream
shorter than N chunks meets its fault after its last chunk.
"""

import fcntl
import logging
import os
import socket
import struct
import termios
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.core.cache import cache
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse

from sandbox.errors import ProviderError

logger = logging.getLogger("sandbox")

MAX_DELAY_MS = 30_000
TIMEOUT_SLEEP_SECONDS = 65
DEFAULT_DELAY_MS = 1000
DEFAULT_OVERSIZE_MB = 11
MAX_OVERSIZE_MB = 256
FAIL_COUNT_TTL_SECONDS = 3600
MAX_CHUNK_DELAY_MS = 1000
# How long a reset waits for the chunks already written to be acknowledged by the client.
FLUSH_WAIT_SECONDS = 2.0
NAMED = frozenset({"delay", "timeout", "reset", "stall", "oversize", "badjson", "empty"})
IN_STREAM = frozenset({"reset", "stall"})
STATUS_CODES = {
    429: "rate_limited",
    500: "internal_error",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}


@dataclass(frozen=True)
class Fault:
    kind: str | None
    delay_ms: int
    retry_after: int | None
    size_mb: float
    fail_times: int | None
    key: str | None
    chunk_delay_ms: int = 0
    after_chunks: int | None = None

    @property
    def in_stream(self) -> bool:
        """Whether the fault happens between the chunks of a streamed answer."""
        return self.kind in IN_STREAM and self.after_chunks is not None


def _knob(request, body, name: str):
    value = request.GET.get(name)
    if value is None:
        value = request.headers.get("X-" + "-".join(part.capitalize() for part in name.split("_")))
    if value is None and isinstance(body, dict):
        value = body.get(name)
    return None if value is None or value == "" else str(value)


def _number(name: str, text: str | None, default, cast=int):
    if text is None:
        return default
    try:
        value = cast(text)
    except ValueError:
        raise ProviderError(400, "invalid_parameter", f"{name} must be a number") from None
    if value < 0:
        raise ProviderError(400, "invalid_parameter", f"{name} may not be negative")
    return value


def fault_from(request, body) -> Fault | None:
    kind = _knob(request, body, "sandbox_fault")
    delay = _knob(request, body, "sandbox_delay_ms")
    chunk_delay = _knob(request, body, "sandbox_chunk_delay_ms")
    after_chunks = _knob(request, body, "sandbox_after_chunks")
    if kind is None and delay is None and chunk_delay is None and after_chunks is None:
        return None
    kind = kind.lower() if kind else None
    if kind is not None and kind not in NAMED and not _is_status(kind):
        raise ProviderError(
            400,
            "invalid_parameter",
            f"sandbox_fault must be one of {', '.join(sorted(NAMED))} or an HTTP status "
            f"from 400 to 599 (got {kind!r})",
        )
    if after_chunks is not None and kind not in IN_STREAM:
        raise ProviderError(
            400,
            "invalid_parameter",
            "sandbox_after_chunks goes with sandbox_fault=reset or sandbox_fault=stall",
        )
    delay_ms = _number("sandbox_delay_ms", delay, DEFAULT_DELAY_MS if kind == "delay" else 0)
    return Fault(
        kind=None if kind == "delay" else kind,
        delay_ms=min(delay_ms, MAX_DELAY_MS),
        retry_after=_number(
            "sandbox_retry_after", _knob(request, body, "sandbox_retry_after"), None
        ),
        size_mb=min(
            _number(
                "sandbox_size_mb",
                _knob(request, body, "sandbox_size_mb"),
                DEFAULT_OVERSIZE_MB,
                float,
            ),
            MAX_OVERSIZE_MB,
        ),
        fail_times=_number("sandbox_fail_times", _knob(request, body, "sandbox_fail_times"), None),
        key=_knob(request, body, "sandbox_fault_key"),
        chunk_delay_ms=min(_number("sandbox_chunk_delay_ms", chunk_delay, 0), MAX_CHUNK_DELAY_MS),
        after_chunks=_number("sandbox_after_chunks", after_chunks, None),
    )


def _is_status(kind: str) -> bool:
    return kind.isdigit() and 400 <= int(kind) <= 599


def fault_applies(fault: Fault, default_key: str) -> bool:
    """False once the first ``fail_times`` requests of the fault's key have failed."""
    if fault.fail_times is None:
        return True
    key = f"sandbox:fail:{fault.key or default_key}"
    cache.add(key, 0, FAIL_COUNT_TTL_SECONDS)
    try:
        seen = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, FAIL_COUNT_TTL_SECONDS)
        seen = 1
    return seen <= fault.fail_times


def fault_response(fault: Fault, request) -> HttpResponse | None:
    """The faulty answer, or None to answer normally (after any delay already slept) or to
    leave the fault to the stream (``fault_stream``)."""
    kind = fault.kind
    if kind is None or fault.in_stream:
        return None
    if kind == "timeout":
        time.sleep(TIMEOUT_SLEEP_SECONDS)
        return None
    if kind == "stall":
        time.sleep(TIMEOUT_SLEEP_SECONDS)
        return HttpResponse(b"", content_type="application/json")
    if kind == "badjson":
        return HttpResponse(b'{"data": [{"id": 1, "name": "trunc', content_type="application/json")
    if kind == "empty":
        return HttpResponse(b"", content_type="application/json")
    if kind == "oversize":
        return _oversize(fault.size_mb)
    if kind == "reset":
        if reset_connection(request):
            return HttpResponse(b"", status=200)
        raise _reset_unavailable()
    status = int(kind)
    code = STATUS_CODES.get(status, "sandbox_fault")
    headers = {}
    if status == 429 or (status == 503 and fault.retry_after is not None):
        headers["Retry-After"] = str(1 if fault.retry_after is None else fault.retry_after)
    messages = {
        429: "Rate limit exceeded, retry later",
        503: "Service temporarily unavailable",
        500: "Internal server error",
    }
    raise ProviderError(
        status, code, messages.get(status, f"Injected error {status}"), headers=headers
    )


def _reset_unavailable() -> ProviderError:
    return ProviderError(
        502,
        "reset_unavailable",
        "sandbox_fault=reset needs a real client socket (gunicorn or Django's test or "
        "development server); none was found for this request",
    )


def fault_stream(fault: Fault, response: HttpResponseBase, request) -> HttpResponseBase:
    """The answer with the chunk delay and any in-stream fault applied to its chunks."""
    if not response.streaming:
        if fault.in_stream:
            raise ProviderError(
                400,
                "invalid_parameter",
                "sandbox_after_chunks needs a streamed answer (such as a chat completion with "
                '"stream": true)',
            )
        return response
    if not fault.chunk_delay_ms and not fault.in_stream:
        return response
    if fault.in_stream and fault.kind == "reset" and client_socket(request) is None:
        raise _reset_unavailable()
    response.streaming_content = _paced(response.streaming_content, fault, request)
    return response


def _paced(chunks: Iterable[bytes], fault: Fault, request) -> Iterator[bytes]:
    # The server writes each chunk before it asks for the next, so when this generator resumes
    # after its Nth yield, N chunks have been written to the client's socket.
    delay = fault.chunk_delay_ms / 1000
    after = fault.after_chunks if fault.in_stream else None
    for sent, chunk in enumerate(chunks):
        if sent == after:
            break
        if sent and delay:
            time.sleep(delay)
        yield chunk
    if after is None:
        return
    if fault.kind == "reset":
        reset_connection(request)
    else:
        time.sleep(TIMEOUT_SLEEP_SECONDS)


def _oversize(size_mb: float) -> StreamingHttpResponse:
    total = int(size_mb * 1024 * 1024)
    chunk = b"x" * 65536

    def body():
        yield b'{"data": "'
        left = total
        while left > 0:
            yield chunk[: min(left, len(chunk))]
            left -= len(chunk)
        yield b'"}'

    # No Content-Length: the size cap of a client has to work on a streamed body.
    return StreamingHttpResponse(body(), content_type="application/json")


def client_socket(request) -> socket.socket | None:
    """The TCP socket of the current request: gunicorn names it, Django's servers hide it
    behind the WSGI input stream (LimitedStream -> BufferedReader -> SocketIO -> socket)."""
    found = request.META.get("gunicorn.socket")
    if isinstance(found, socket.socket):
        return found
    current, seen = request.META.get("wsgi.input"), 0
    while current is not None and seen < 8:
        if isinstance(current, socket.socket):
            return current
        seen += 1
        read = getattr(current, "_read", None)
        current = (
            getattr(read, "__self__", None)
            or getattr(current, "raw", None)
            or getattr(current, "_sock", None)
            or getattr(current, "stream", None)
        )
    return None


def reset_connection(request) -> bool:
    """Abort the client's connection with a TCP RST. True when it was done.

    SO_LINGER with a zero timeout makes the last close of the socket send RST instead of FIN.
    The server still owns the socket object, so instead of closing its file descriptor (which
    another thread could reuse at once) an unconnected socket is duplicated over it: that drops
    the connection, and the server's own later write and close hit the harmless placeholder.
    A RST discards whatever the kernel has not yet delivered, so what the server already wrote
    (the chunks before a mid-stream reset) is first left to reach the client.
    """
    sock = client_socket(request)
    if sock is None or sock.fileno() < 0:
        return False
    _wait_until_acknowledged(sock)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        with socket.socket(sock.family, socket.SOCK_STREAM) as placeholder:
            os.dup2(placeholder.fileno(), sock.fileno())
    except OSError:
        logger.warning("Could not reset the client connection", exc_info=True)
        return False
    return True


def _wait_until_acknowledged(sock: socket.socket) -> None:
    deadline = time.monotonic() + FLUSH_WAIT_SECONDS
    while _unacknowledged_bytes(sock) and time.monotonic() < deadline:
        time.sleep(0.001)


def _unacknowledged_bytes(sock: socket.socket) -> int:
    """Bytes written to the socket that the peer has not acknowledged (Linux's SIOCOUTQ, which
    is TIOCOUTQ); 0 where the system cannot tell."""
    try:
        answer = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, struct.pack("i", 0))
    except OSError:
        return 0
    return struct.unpack("i", answer)[0]
