"""The cache and the rate limiter when Redis does not answer (a port nothing listens on, then a
redis-server of the test's own started on it): reads miss, writes are dropped, counts are kept
in the process, one line is logged for the outage and one when Redis answers again."""

import logging
import time

import pytest

from gateway import cache as gateway_cache
from gateway import ratelimit
from gateway.cache import RETRY_SECONDS, RedisOutage, ResilientRedisCache
from tests.fault_processes import private_redis

LOGGER = "gateway.redis"


@pytest.fixture
def redis_server(tmp_path):
    """A redis-server of the test's own, killed at once: its port answers nothing until the test
    starts it again."""
    with private_redis(tmp_path) as server:
        server.kill()
        yield server


@pytest.fixture
def outage(monkeypatch, settings, redis_server) -> RedisOutage:
    """This process's Redis is the private one, and its outage state starts afresh."""
    settings.REDIS_URL = redis_server.url()
    state = RedisOutage()
    monkeypatch.setattr(gateway_cache, "redis_outage", state)
    monkeypatch.setattr(ratelimit, "redis_outage", state)
    monkeypatch.setattr(gateway_cache, "_client", None)
    monkeypatch.setattr(ratelimit, "_process_counts", type(ratelimit._process_counts)("t", {}))
    return state


def _cache(redis_server) -> ResilientRedisCache:
    return ResilientRedisCache(redis_server.url(), {"KEY_PREFIX": "gw-cache-test"})


def _lines(caplog, text: str) -> int:
    return sum(text in record.getMessage() for record in caplog.records if record.name == LOGGER)


def test_a_cache_without_redis_misses_drops_writes_and_logs_the_outage_once(
    outage, redis_server, caplog
):
    cache = _cache(redis_server)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for _ in range(5):
            cache.set("key", "value", timeout=60)
            assert cache.get("key") is None
            assert cache.get("key", "default") == "default"
            assert cache.add("key", 0) is False
            assert cache.get_many(["key", "other"]) == {}
            with pytest.raises(ValueError):
                cache.incr("key")
            cache.delete("key")

    assert outage.down
    assert _lines(caplog, "Redis is unreachable") == 1


def test_rate_limits_count_in_the_process_while_redis_is_unreachable(outage, caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        counts = [ratelimit.window_count(subject="key-1", window_seconds=60)[0] for _ in range(5)]
        other = ratelimit.window_count(subject="key-2", window_seconds=60)[0]

    assert counts == [1, 2, 3, 4, 5]
    assert other == 1
    assert _lines(caplog, "Redis is unreachable") == 1


def test_the_cache_uses_redis_again_once_it_answers(outage, redis_server, caplog):
    cache = _cache(redis_server)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert cache.get("key") is None
        redis_server.start()
        time.sleep(RETRY_SECONDS + 0.1)
        cache.set("key", "kept", timeout=60)

        assert cache.get("key") == "kept"
        assert ratelimit.window_count(subject="key-1", window_seconds=60)[0] == 1
        assert ratelimit.window_count(subject="key-1", window_seconds=60)[0] == 2

    assert not outage.down
    assert _lines(caplog, "Redis is unreachable") == 1
    assert _lines(caplog, "Redis answers again") == 1
