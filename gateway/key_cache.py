"""Where authenticated keys are remembered: the shared cache (Redis when configured) and, for
API_KEY_LOCAL_CACHE_SECONDS, each process's own memory."""

import time

from django.conf import settings
from django.core.cache import cache

LOCAL_MAX_ENTRIES = 10_000

_local: dict[str, tuple[float, object]] = {}


def shared_key(key_hash: str) -> str:
    return f"apikey:{key_hash}"


def local_get(key_hash: str):
    remembered = _local.get(key_hash)
    if remembered is not None and remembered[0] > time.monotonic():
        return remembered[1]
    return None


def local_put(key_hash: str, principal) -> None:
    if len(_local) >= LOCAL_MAX_ENTRIES:
        _local.clear()
    _local[key_hash] = (time.monotonic() + settings.API_KEY_LOCAL_CACHE_SECONDS, principal)


def forget(key_hash: str | None = None) -> None:
    """Drop a key from the shared cache and this process (other processes within a second);
    without a hash, empty this process's memory."""
    if key_hash is None:
        _local.clear()
        return
    cache.delete(shared_key(key_hash))
    _local.pop(key_hash, None)
