"""POST /v1/run against a real HTTP provider on a local socket: retries, failures and the
private-address guard."""

import pytest
from django.core.management import call_command

from credits.models import UsageEvent
from tests.factories import fund
from tests.http_double import HttpDouble, Reply


@pytest.fixture
def provider(leads, settings):
    settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS = True
    with HttpDouble() as double:
        leads.api.base_url = double.url
        leads.api.save(update_fields=["base_url"])
        yield double


@pytest.fixture
def funded(alice):
    return fund(alice.user, 10_000_000)


def flaky(failures, status=503):
    state = {"calls": 0}

    def route(seen):
        state["calls"] += 1
        return (
            Reply(status, {"error": "busy"})
            if state["calls"] <= failures
            else Reply(200, {"status": "done"})
        )

    return route


def test_a_get_is_retried_on_a_503_and_charged_once(run, alice, provider, funded):
    provider.routes["/v1/items"] = flaky(2)
    response = run(alice.live_key, api="leads", path="/v1/items", method="GET")
    assert response.status_code == 200
    assert len(provider.calls("/v1/items")) == 3
    funded.refresh_from_db()
    assert funded.balance_micros == 10_000_000 - 10_000


def test_a_post_is_not_retried_and_not_charged(run, alice, provider, funded):
    provider.routes["/v1/people/enrich"] = flaky(1)
    response = run(alice.live_key, api="leads", path="/v1/people/enrich", body={"email": "x"})
    assert response.status_code == 502
    assert len(provider.calls("/v1/people/enrich")) == 1
    funded.refresh_from_db()
    assert funded.balance_micros == 10_000_000


@pytest.mark.parametrize(
    ("reply", "message"),
    [(Reply(reset=True), "reset"), (Reply(200, b"x" * 3000), "exceeds the limit")],
)
def test_resets_and_oversized_answers_are_502_and_not_charged(
    run, alice, provider, funded, settings, reply, message
):
    settings.UPSTREAM_MAX_RESPONSE_BYTES = 1000
    provider.routes["/v1/jobs/1"] = reply
    response = run(alice.live_key, api="leads", path="/v1/jobs/1")
    assert response.status_code == 502
    assert message in response.json()["error"]
    assert UsageEvent.objects.get().status == "failed"


def test_a_provider_on_a_private_address_is_refused_unless_allowed(
    run, alice, provider, funded, settings
):
    settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS = False
    provider.routes["/v1/people/enrich"] = Reply(200, {"ok": True})
    response = run(alice.live_key, api="leads", path="/v1/people/enrich", body={"email": "x"})
    assert response.status_code == 502
    assert "non-public address" in response.json()["error"]
    assert provider.seen == []
    funded.refresh_from_db()
    assert funded.balance_micros == 10_000_000
    call_command("check_ledger")
