"""A key's calls in flight are capped (CALLS_IN_FLIGHT_PER_KEY), and so are a client address's
rail calls: past the cap a call is refused at once with a 429 instead of holding another server
thread, while other keys are served. Test keys wait for the sandbox at most
TEST_KEY_TIMEOUT_SECONDS."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connections
from rest_framework.test import APIClient

from credits.models import LedgerEntry
from gateway import errors
from tests.factories import fund, make_persona
from tests.http_double import HttpDouble, Reply

pytestmark = pytest.mark.django_db(transaction=True)

ENRICH = {"api": "leads", "path": "/v1/people/enrich", "body": {"email": "ada@example.com"}}
CHAT = {
    "api": "leads",
    "path": "/api/paas/v4/chat/completions",
    "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
}
EVENTS = (
    b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\n'
    b"data: [DONE]\n\n"
)


@pytest.fixture
def provider(leads, settings):
    settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS = True
    with HttpDouble() as double:
        leads.api.base_url = double.url
        leads.api.sandbox_base_url = double.url
        leads.api.save(update_fields=["base_url", "sandbox_base_url"])
        yield double


@pytest.fixture
def held_provider(provider):
    """The enrich endpoint answers only once ``release`` is set; ``arrived`` counts requests."""
    release, arrived = threading.Event(), threading.Semaphore(0)

    def enrich(seen):
        arrived.release()
        release.wait(20)
        return Reply(200, {"person": {"name": "Ada"}})

    provider.routes["/v1/people/enrich"] = enrich
    provider.release, provider.arrived = release, arrived
    yield provider
    release.set()


def run(secret, payload):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    try:
        return client.post("/v1/run", payload, format="json")
    finally:
        connections.close_all()


def in_flight(pool, count, secret, provider, payload=ENRICH):
    """Start ``count`` runs of ``secret`` and return once the provider holds all of them."""
    futures = [pool.submit(run, secret, payload) for _ in range(count)]
    for _ in range(count):
        assert provider.arrived.acquire(timeout=10)
    return futures


def test_a_key_past_its_calls_in_flight_is_refused_and_other_keys_are_served(
    held_provider, settings
):
    settings.CALLS_IN_FLIGHT_PER_KEY = 3
    slow, other = make_persona("slow@example.com"), make_persona("other@example.com")
    account = fund(slow.user, 1_000_000)
    fund(other.user, 1_000_000)

    with ThreadPoolExecutor(max_workers=4) as pool:
        held = in_flight(pool, 3, slow.live_key, held_provider)

        refused = run(slow.live_key, ENRICH)
        assert refused.status_code == 429
        assert refused.json()["code"] == "RATE_LIMITED"
        assert "3 calls in flight" in refused.json()["error"]
        assert refused["Retry-After"] == "1"

        served = pool.submit(run, other.live_key, ENRICH)
        assert held_provider.arrived.acquire(timeout=10)  # another key's call got through
        held_provider.release.set()
        assert served.result(timeout=20).status_code == 200
        assert [future.result(timeout=20).status_code for future in held] == [200, 200, 200]

    assert run(slow.live_key, ENRICH).status_code == 200  # the slots came back
    assert LedgerEntry.objects.filter(account=account, type="api_call").count() == 4
    call_command("check_ledger")


def test_a_worker_at_its_calls_in_flight_refuses_more_and_still_answers_the_rest(
    held_provider, settings, caplog, monkeypatch
):
    """However many keys call a slow provider, a worker keeps threads for requests that call
    none: past CALLS_IN_FLIGHT_PER_WORKER a run is refused at once, whoami is served."""
    settings.CALLS_IN_FLIGHT_PER_WORKER = 2
    first, second, third = (make_persona(f"caller{n}@example.com") for n in range(3))
    for persona in (first, second, third):
        fund(persona.user, 1_000_000)

    with ThreadPoolExecutor(max_workers=2) as pool:
        held = in_flight(pool, 1, first.live_key, held_provider)
        held += in_flight(pool, 1, second.live_key, held_provider)

        monkeypatch.setattr(errors, "worker_busy_log", errors._RefusalLog(interval_seconds=60))
        assert run(third.live_key, ENRICH).status_code == 503
        refused = run(third.live_key, ENRICH)
        assert refused.status_code == 503
        assert refused.json()["code"] == "SERVICE_UNAVAILABLE"
        assert "2 calls to providers in flight" in refused.json()["error"]
        assert refused["Retry-After"] == "1"
        # Two refusals, one warning line, and no error line from Django.
        busy_lines = [r for r in caplog.records if "calls to providers in flight" in r.message]
        assert [r.levelname for r in busy_lines] == ["WARNING"]
        assert not [r for r in caplog.records if r.name == "django.request"]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {third.live_key}")
        assert client.get("/v1/whoami").status_code == 200

        held_provider.release.set()
        assert [future.result(timeout=20).status_code for future in held] == [200, 200]

    assert run(third.live_key, ENRICH).status_code == 200
    assert LedgerEntry.objects.filter(account__user=third.user, type="api_call").count() == 1
    call_command("check_ledger")


def test_a_failed_or_refused_call_gives_its_slot_back(provider, settings):
    settings.CALLS_IN_FLIGHT_PER_KEY = 1
    persona = make_persona("failing@example.com")
    fund(persona.user, 1_000_000)
    provider.routes["/v1/people/enrich"] = Reply(500, {"error": "down"})
    assert run(persona.live_key, ENRICH).status_code == 502
    assert run(persona.live_key, {**ENRICH, "path": "/v1/nowhere"}).status_code == 404

    provider.routes["/v1/people/enrich"] = Reply(200, {"person": {"name": "Ada"}})
    assert run(persona.live_key, ENRICH).status_code == 200


def test_a_stream_holds_its_slot_until_it_is_relayed_or_the_caller_goes_away(provider, settings):
    settings.CALLS_IN_FLIGHT_PER_KEY = 1
    persona = make_persona("streamer@example.com")
    fund(persona.user, 1_000_000)
    provider.routes["/api/paas/v4/chat/completions"] = Reply(
        200, EVENTS, headers={"Content-Type": "text/event-stream"}
    )

    streaming = run(persona.live_key, CHAT)
    assert streaming.status_code == 200 and streaming.streaming
    assert run(persona.live_key, ENRICH).status_code == 429  # its stream is not relayed yet
    relayed = b"".join(streaming.streaming_content)
    assert relayed.endswith(b"data: [DONE]\n\n")
    streaming.close()

    interrupted = run(persona.live_key, CHAT)
    assert next(iter(interrupted.streaming_content))
    interrupted.close()  # the caller went away after the first event
    provider.routes["/v1/people/enrich"] = Reply(200, {"person": {"name": "Ada"}})
    assert run(persona.live_key, ENRICH).status_code == 200
    call_command("check_ledger")


def test_a_client_address_past_its_rail_calls_in_flight_is_refused(held_provider, settings):
    """A free endpoint is served on a rail without payment: its calls are held like any."""
    settings.RAIL_CALLS_IN_FLIGHT_PER_ADDRESS = 2
    held_provider.routes["/v1/jobs/7"] = held_provider.routes.pop("/v1/people/enrich")

    def rail_call():
        try:
            return APIClient().get("/rails/x402/leads/v1/jobs/7")
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool:
        held = [pool.submit(rail_call) for _ in range(2)]
        for _ in held:
            assert held_provider.arrived.acquire(timeout=10)
        refused = rail_call()
        assert refused.status_code == 429
        assert "2 rail calls in flight" in refused.json()["error"]
        held_provider.release.set()
        assert [future.result(timeout=20).status_code for future in held] == [200, 200]
    assert rail_call().status_code == 200


def test_a_test_key_waits_for_the_sandbox_at_most_test_key_timeout_seconds(provider, settings):
    settings.TEST_KEY_TIMEOUT_SECONDS = 0.5
    persona = make_persona("tester@example.com")
    provider.routes["/v1/people/enrich"] = Reply(200, {"person": {"name": "Ada"}}, delay=3)

    started = time.monotonic()
    answer = run(persona.test_key, ENRICH)
    assert answer.status_code == 504
    assert "did not answer within 0.5 seconds" in json.dumps(answer.json())
    assert time.monotonic() - started < 2.5
