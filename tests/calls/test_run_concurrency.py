"""POST /v1/run under concurrent callers, on PostgreSQL with real threads."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connections
from rest_framework.test import APIClient

from credits.models import Account, LedgerEntry
from tests.factories import fund, make_persona
from tests.http_double import HttpDouble, Reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("both_settlements")]


@pytest.fixture
def provider(leads, settings):
    settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS = True
    with HttpDouble() as double:
        leads.api.base_url = double.url
        leads.api.save(update_fields=["base_url"])
        yield double


def concurrently(count: int, call):
    barrier = threading.Barrier(count)

    def one(index):
        try:
            barrier.wait()
            return call(index)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def post_run(secret, payload, headers=None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client.post("/v1/run", payload, format="json", headers=headers or {})


def test_64_concurrent_runs_on_a_balance_for_10_charge_exactly_10(provider):
    persona = make_persona("racer@example.com")
    account = fund(persona.user, 10 * 50_000)
    provider.routes["/v1/people/enrich"] = Reply(200, {"person": {"name": "Ada"}})

    responses = concurrently(
        64,
        lambda i: post_run(
            persona.live_key,
            {"api": "leads", "path": "/v1/people/enrich", "body": {"email": f"p{i}@x.com"}},
        ),
    )

    statuses = [response.status_code for response in responses]
    assert statuses.count(200) == 10
    assert statuses.count(402) == 54
    assert len(provider.calls("/v1/people/enrich")) == 10
    account = Account.objects.get(pk=account.pk)
    assert (account.balance_micros, account.held_micros) == (0, 0)
    assert LedgerEntry.objects.filter(account=account, type="api_call").count() == 10
    call_command("check_ledger")


def test_eight_concurrent_retries_with_one_idempotency_key_call_once_and_charge_once(provider):
    persona = make_persona("retrier@example.com")
    account = fund(persona.user, 1_000_000)
    provider.routes["/v1/people/enrich"] = Reply(200, {"person": {"name": "Ada"}}, delay=0.3)
    payload = {"api": "leads", "path": "/v1/people/enrich", "body": {"email": "a@b.c"}}

    responses = concurrently(
        8, lambda i: post_run(persona.live_key, payload, {"Idempotency-Key": "order-42"})
    )

    assert len(provider.calls("/v1/people/enrich")) == 1
    statuses = sorted(response.status_code for response in responses)
    assert statuses.count(200) >= 1
    assert set(statuses) <= {200, 409}
    conflicts = [r.json() for r in responses if r.status_code == 409]
    assert all(body["code"] == "IDEMPOTENCY_IN_PROGRESS" for body in conflicts)
    account.refresh_from_db()
    assert account.balance_micros == 1_000_000 - 50_000

    replay = post_run(persona.live_key, payload, {"Idempotency-Key": "order-42"})
    first = next(r for r in responses if r.status_code == 200 and "Idempotent-Replayed" not in r)
    assert replay.status_code == 200
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert replay["X-Request-Id"] == first["X-Request-Id"]
    assert len(provider.calls("/v1/people/enrich")) == 1
    call_command("check_ledger")
