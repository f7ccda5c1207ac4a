"""Redis as the gateway uses it: a cache whose outage costs misses, not errors.

Nothing in Redis is the only copy of anything: keys, routes and lists are cached from
PostgreSQL, rate-limit counters restart each minute, the sandbox's counters have fallbacks. So
when Redis stops answering, each process carries on without it: cache reads miss, writes are
dropped, rate limits count in the process (gateway.ratelimit), and one line is logged when the
outage starts and one when it ends. While it lasts, one caller at a time tries Redis again, at
most once every RETRY_SECONDS, so requests do not each wait for a connection that is refused.
"""

import functools
import logging
import threading
import time

import redis
from django.conf import settings
from django.core.cache.backends.redis import RedisCache
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger("gateway.redis")

RETRY_SECONDS = 1.0

# What an unreachable, restarting or overloaded Redis raises (BusyLoadingError is a
# ConnectionError); a wrong command or type still raises.
REDIS_UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class RedisOutage:
    """Whether this process is doing without Redis, and when to try it again."""

    def __init__(self):
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._next_attempt = 0.0

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def available(self) -> bool:
        """Whether to use Redis now: always while it answers; during an outage, True for the
        one caller whose turn it is to try it again."""
        if self._down_since is None:
            return True
        now = time.monotonic()
        with self._lock:
            if now < self._next_attempt:
                return False
            self._next_attempt = now + RETRY_SECONDS
            return True

    def failed(self, error: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            self._next_attempt = now + RETRY_SECONDS
            if self._down_since is not None:
                return
            self._down_since = now
        logger.warning(
            "Redis is unreachable (%s: %s): rate limits count in each process and the cache "
            "misses until it answers again",
            error.__class__.__name__,
            error,
        )

    def succeeded(self) -> None:
        if self._down_since is None:
            return
        with self._lock:
            if self._down_since is None:
                return
            seconds = time.monotonic() - self._down_since
            self._down_since = None
        logger.warning(
            "Redis answers again after %.1f s: shared rate limits and cache resume", seconds
        )


redis_outage = RedisOutage()


def redis_connection_options() -> dict:
    """How every Redis connection of the gateway connects: within REDIS_TIMEOUT_SECONDS, and
    again at once after one failure (a pooled connection that a restart of Redis closed), but
    not ten times with backoff as redis-py's client does by default, which would hold a request
    for seconds on every attempt during an outage. A process's pool may open as many connections
    as its threads use at once: redis-py's default of 100 is fewer than a worker's threads."""
    return {
        "socket_connect_timeout": settings.REDIS_TIMEOUT_SECONDS,
        "socket_timeout": settings.REDIS_TIMEOUT_SECONDS,
        "retry": Retry(NoBackoff(), 1),
        "max_connections": settings.REDIS_MAX_CONNECTIONS,
    }


_client: redis.Redis | None = None
_client_lock = threading.Lock()


def redis_client() -> redis.Redis | None:
    """The process's client of REDIS_URL for what Django's cache API cannot do in one round trip
    (rate-limit counters, calls in flight); None without Redis."""
    global _client
    if not settings.REDIS_URL:
        return None
    if _client is None:
        with _client_lock:
            _client = _client or redis.Redis.from_url(
                settings.REDIS_URL, **redis_connection_options()
            )
    return _client


def _missing(key, *args, **kwargs):
    raise ValueError(f"Key {key!r} not found")


def _without_redis(fallback):
    """Run the cache operation on Redis, or answer ``fallback(*arguments)`` when Redis is
    unreachable (or known to be, until it is due another try)."""

    def decorate(operation):
        @functools.wraps(operation)
        def guarded(self, *args, **kwargs):
            if not redis_outage.available():
                return fallback(*args, **kwargs)
            try:
                result = operation(self, *args, **kwargs)
            except REDIS_UNREACHABLE as error:
                redis_outage.failed(error)
                return fallback(*args, **kwargs)
            redis_outage.succeeded()
            return result

        return guarded

    return decorate


def _default(key, default=None, *args, **kwargs):
    return default


def _nothing(*args, **kwargs):
    return None


def _false(*args, **kwargs):
    return False


def _empty(*args, **kwargs):
    return {}


def _all_failed(data, *args, **kwargs):
    return list(data)


class ResilientRedisCache(RedisCache):
    """Django's Redis cache, answering as an empty cache that keeps nothing while Redis is
    unreachable: a read misses, a write is dropped, ``add`` adds nothing and ``incr`` finds no
    key (ValueError, as for a key that expired)."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._options = {**redis_connection_options(), **self._options}

    add = _without_redis(_false)(RedisCache.add)
    get = _without_redis(_default)(RedisCache.get)
    set = _without_redis(_nothing)(RedisCache.set)
    touch = _without_redis(_false)(RedisCache.touch)
    delete = _without_redis(_false)(RedisCache.delete)
    get_many = _without_redis(_empty)(RedisCache.get_many)
    has_key = _without_redis(_false)(RedisCache.has_key)
    incr = _without_redis(_missing)(RedisCache.incr)
    set_many = _without_redis(_all_failed)(RedisCache.set_many)
    delete_many = _without_redis(_nothing)(RedisCache.delete_many)
    clear = _without_redis(_false)(RedisCache.clear)
