"""Requests per minute per API key, counted in fixed one-minute windows (and, with the same
counter, other events that need a ceiling, such as password-reset emails).

With Redis the count is one pipelined INCR + EXPIRE, exact across threads and workers (a
library such as django-ratelimit spends three round trips per request through Django's cache
API); with the in-process cache it is exact within one worker. While Redis is unreachable
(gateway.cache) each worker counts on its own, from zero, until Redis answers again: a limit then
lets through up to its value per worker, rather than refusing or failing every request.
"""

import time

from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache
from rest_framework.throttling import BaseThrottle

from gateway.cache import REDIS_UNREACHABLE, redis_client, redis_outage
from gateway.selectors import KeyPrincipal

WINDOW_SECONDS = 60

# The counts of this process while Redis is unreachable. LocMemCache culls a third of its entries
# when full, which would start some keys' counts again: it is sized for every key of a minute.
_process_counts = LocMemCache("gateway-ratelimit", {"OPTIONS": {"MAX_ENTRIES": 100_000}})


def window_count(*, subject: str, window_seconds: int) -> tuple[int, int]:
    """Count one event of a subject in the current fixed window of ``window_seconds``:
    (events in the window so far, seconds until it ends)."""
    now = time.time()
    window = int(now // window_seconds)
    name = f"{settings.CACHES['default'].get('KEY_PREFIX', '')}:ratelimit:{subject}:{window}"
    count = _shared_count(name, window_seconds)
    if count is None:
        counts = _process_counts if settings.REDIS_URL else cache
        counts.add(name, 0, timeout=window_seconds + 1)
        count = counts.incr(name)
    return count, window_seconds - int(now % window_seconds)


def _shared_count(name: str, window_seconds: int) -> int | None:
    """The event counted in Redis; None without Redis, or while it is unreachable."""
    client = redis_client()
    if client is None or not redis_outage.available():
        return None
    pipeline = client.pipeline(transaction=False)
    pipeline.incr(name)
    pipeline.expire(name, window_seconds + 1)
    try:
        count, _ = pipeline.execute()
    except REDIS_UNREACHABLE as error:
        redis_outage.failed(error)
        return None
    redis_outage.succeeded()
    return count


def rate_limit_count(*, key_id: int) -> tuple[int, int]:
    """Count one request of a key: (requests in the current minute, seconds until it ends)."""
    return window_count(subject=str(key_id), window_seconds=WINDOW_SECONDS)


class ApiKeyRateThrottle(BaseThrottle):
    retry_after = 1

    def allow_request(self, request, view):
        principal = request.auth
        if not settings.RATE_LIMIT_ENABLED or not isinstance(principal, KeyPrincipal):
            return True
        limit = principal.rate_limit_per_minute or settings.RATE_LIMIT_PER_MINUTE
        count, self.retry_after = rate_limit_count(key_id=principal.key_id)
        return count <= limit

    def wait(self):
        return self.retry_after
