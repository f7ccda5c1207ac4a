"""Calls in flight per key or per client address, capped.

A rate limit counts requests a minute; it does not stop a handful of callers from tying up every
server thread with calls to a provider that takes seconds to answer. So each call to a provider
takes a slot of its caller's (an API key, or the client address of rail traffic) for as long as
it runs, streams included, and a caller with every slot taken is refused at once (429) instead
of waiting for a thread.

With Redis the slots of a caller are one sorted set shared by every worker and host: a member
per call, scored by the time its slot lapses. A slot is given back when its call ends; one whose
worker was killed lapses by itself after the longest a call can last. Without Redis, or while
it is unreachable (gateway.cache), each process counts its own calls.

Each slot also counts against its worker process: many keys at once could otherwise still take
every thread of one worker, and the requests that call no provider, queued behind them, would
wait as long as the slowest provider. A gunicorn worker runs at most its threads less an eighth
(CALLS_IN_FLIGHT_PER_WORKER overrides), learnt when it starts (gateway.gunicorn_config); a
worker at its limit answers 503 at once. A process not served by gunicorn has no such limit
unless the setting gives one.
"""

import secrets
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

from gateway.cache import REDIS_UNREACHABLE, redis_client, redis_outage
from gateway.errors import RateLimited, WorkerBusy

# Drops lapsed slots, then adds one if fewer than the limit remain. Redis's own clock, so hosts
# whose clocks differ agree on when a slot lapses.
_TAKE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local lapses_ms = now_ms + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], lapses_ms, ARGV[3])
local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], tonumber(latest[2]))
return 1
"""

_process_lock = threading.Lock()
_process_counts: Counter = Counter()
WORKER = "worker"  # this process's own count of calls in flight, in _process_counts
_worker_threads: int | None = None


def worker_threads_set(threads: int) -> None:
    """Record the threads of the gunicorn worker this process is (its post_worker_init)."""
    global _worker_threads
    _worker_threads = threads


def worker_limit() -> int | None:
    """The calls to providers this process runs at once, or None for no limit."""
    if settings.CALLS_IN_FLIGHT_PER_WORKER is not None:
        return settings.CALLS_IN_FLIGHT_PER_WORKER
    if _worker_threads is None:
        return None
    return _worker_threads - max(1, _worker_threads // 8)


@dataclass
class InFlightSlot:
    """One call's slot: give it back with ``release`` (more than once is harmless)."""

    subject: str
    token: str | None  # its member in Redis, or None when counted in this process
    released: bool = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        _process_give_back(WORKER)
        if self.token is None:
            _process_give_back(self.subject)
            return
        client = redis_client()
        if client is None or not redis_outage.available():
            return  # the slot lapses by itself
        try:
            client.zrem(_name(self.subject), self.token)
        except REDIS_UNREACHABLE as error:
            redis_outage.failed(error)
            return
        redis_outage.succeeded()


def in_flight_take(*, subject: str, limit: int, lapse_seconds: float) -> InFlightSlot | None:
    """A slot for one more call of ``subject``, or None when it has ``limit`` in flight. A slot
    never released lapses after ``lapse_seconds``. Raises WorkerBusy (503) when this process
    already runs worker_limit() calls."""
    limit_here = worker_limit()
    if not _process_take(WORKER, limit_here):
        raise WorkerBusy(
            f"This gateway worker has {limit_here} calls to providers in flight, the most it "
            "runs at once: retry in a second"
        )
    try:
        slot = _subject_take(subject=subject, limit=limit, lapse_seconds=lapse_seconds)
    except BaseException:
        _process_give_back(WORKER)
        raise
    if slot is None:
        _process_give_back(WORKER)
    return slot


def in_flight_slot(
    *, subject: str, limit: int, lapse_seconds: float, holder: str, calls: str = "calls"
) -> InFlightSlot:
    """A slot for one more call of ``subject``, or a 429 RATE_LIMITED that says ``holder`` ("This
    key") has ``limit`` ``calls`` in flight."""
    slot = in_flight_take(subject=subject, limit=limit, lapse_seconds=lapse_seconds)
    if slot is None:
        raise RateLimited(
            f"{holder} has {limit} {calls} in flight, the most it may have at once: retry when "
            "one of them has answered",
            retry_after=1,
        )
    return slot


def _subject_take(*, subject: str, limit: int, lapse_seconds: float) -> InFlightSlot | None:
    client = redis_client()
    if client is not None and redis_outage.available():
        token = secrets.token_hex(8)
        try:
            taken = client.eval(_TAKE, 1, _name(subject), limit, int(lapse_seconds * 1000), token)
        except REDIS_UNREACHABLE as error:
            redis_outage.failed(error)
        else:
            redis_outage.succeeded()
            return InFlightSlot(subject=subject, token=token) if taken else None
    if not _process_take(subject, limit):
        return None
    return InFlightSlot(subject=subject, token=None)


def _process_take(subject: str, limit: int | None) -> bool:
    with _process_lock:
        if limit is not None and _process_counts[subject] >= limit:
            return False
        _process_counts[subject] += 1
        return True


def _process_give_back(subject: str) -> None:
    with _process_lock:
        _process_counts[subject] -= 1
        if _process_counts[subject] <= 0:
            del _process_counts[subject]


def released_at_end(events: Iterator[bytes], slot: InFlightSlot) -> Iterator[bytes]:
    """``events`` relayed as they are, with ``slot`` given back when they end or are closed."""
    try:
        yield from events
    finally:
        slot.release()


def _name(subject: str) -> str:
    prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
    return f"{prefix}:inflight:{subject}"
