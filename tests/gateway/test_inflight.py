"""Slots of calls in flight (gateway.inflight): shared through Redis by every process, counted in
the process without it or while it is unreachable, and lapsing when never given back."""

import time
from collections import Counter

import pytest

from gateway import cache as gateway_cache
from gateway import inflight
from gateway.cache import RedisOutage
from gateway.errors import WorkerBusy
from gateway.inflight import in_flight_take, released_at_end
from tests.fault_processes import private_redis


@pytest.fixture(autouse=True)
def _no_slots_in_the_process(monkeypatch):
    monkeypatch.setattr(inflight, "_process_counts", Counter())


def take(subject="key:1", limit=2, lapse_seconds=60.0):
    return in_flight_take(subject=subject, limit=limit, lapse_seconds=lapse_seconds)


def test_a_subject_gets_its_limit_of_slots_and_one_more_once_a_slot_is_given_back(settings):
    assert settings.REDIS_URL, "the suite runs with Redis"
    first, second = take(), take()
    assert first.token and second.token  # counted in Redis

    assert take() is None
    assert take(subject="key:2") is not None  # another key has slots of its own

    first.release()
    first.release()  # a second release gives back nothing more
    third = take()
    assert third is not None
    assert take() is None


def test_a_slot_never_given_back_lapses_after_its_time():
    stuck = take(limit=1, lapse_seconds=0.3)
    assert stuck is not None
    assert take(limit=1) is None

    time.sleep(0.4)
    assert take(limit=1) is not None


def test_every_process_counts_against_the_same_slots_in_redis(monkeypatch):
    """What another worker or host took shows in Redis, so it counts here too."""
    assert take(limit=3) is not None
    monkeypatch.setattr(gateway_cache, "_client", None)  # a client of its own, as another has
    assert take(limit=3) is not None
    assert take(limit=3) is not None
    assert take(limit=3) is None


def test_without_redis_each_process_counts_its_own_slots(settings):
    settings.REDIS_URL = ""
    first = take(limit=1)
    assert first is not None and first.token is None
    assert take(limit=1) is None
    first.release()
    assert take(limit=1) is not None


@pytest.fixture
def redis_down(tmp_path, monkeypatch, settings):
    """This process's Redis is one of the test's own, killed: its port answers nothing."""
    with private_redis(tmp_path) as server:
        server.kill()
        settings.REDIS_URL = server.url()
        state = RedisOutage()
        monkeypatch.setattr(gateway_cache, "redis_outage", state)
        monkeypatch.setattr(inflight, "redis_outage", state)
        monkeypatch.setattr(gateway_cache, "_client", None)
        yield server


def test_while_redis_is_unreachable_slots_are_counted_in_the_process(redis_down):
    first = take(limit=1)
    assert first is not None and first.token is None
    assert take(limit=1) is None
    first.release()
    assert take(limit=1) is not None


def test_a_relayed_stream_gives_its_slot_back_when_it_ends_or_is_closed():
    slot = take(limit=1)
    events = released_at_end(iter([b"a", b"b"]), slot)
    assert list(events) == [b"a", b"b"]
    assert slot.released

    slot = take(limit=1)
    events = released_at_end(iter([b"a", b"b"]), slot)
    assert next(events) == b"a"
    assert take(limit=1) is None  # still relaying
    events.close()  # the caller went away
    assert take(limit=1) is not None


def test_a_worker_runs_at_most_its_threads_less_an_eighth_whatever_the_keys(monkeypatch):
    monkeypatch.setattr(inflight, "_worker_threads", 3)  # one kept free, so 2 calls
    first, second = take(subject="key:1"), take(subject="key:2")

    with pytest.raises(WorkerBusy) as busy:
        take(subject="key:3")
    assert busy.value.status_code == 503
    assert busy.value.headers["Retry-After"] == "1"
    assert "2 calls to providers in flight" in busy.value.message

    first.release()
    assert take(subject="key:3") is not None
    second.release()


def test_the_setting_overrides_the_worker_threads(monkeypatch, settings):
    monkeypatch.setattr(inflight, "_worker_threads", 256)
    assert inflight.worker_limit() == 224
    settings.CALLS_IN_FLIGHT_PER_WORKER = 10
    assert inflight.worker_limit() == 10
    monkeypatch.setattr(inflight, "_worker_threads", None)
    settings.CALLS_IN_FLIGHT_PER_WORKER = None
    assert inflight.worker_limit() is None  # not a gunicorn worker: no limit of its own


def test_a_call_refused_for_its_key_takes_nothing_from_the_worker(settings):
    settings.CALLS_IN_FLIGHT_PER_WORKER = 2
    held = take(subject="key:1", limit=1)
    for _ in range(5):
        assert take(subject="key:1", limit=1) is None
    assert take(subject="key:2", limit=1) is not None
    held.release()
