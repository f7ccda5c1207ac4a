from datetime import timedelta

import pytest
import responses
from django.core.management import call_command
from django.utils import timezone

from calls.idempotency import idempotency_begin
from calls.run import RunInput, run_fingerprint
from gateway.models import IdempotencyRecord
from tests.calls.conftest import PROVIDER_URL
from tests.factories import api_key_row, fund

ENRICH = {"api": "leads", "path": "/v1/people/enrich", "body": {"email": "a@b.c"}}


@pytest.fixture
def funded(alice):
    return fund(alice.user, 1_000_000)


@responses.activate
def test_a_retry_with_the_same_key_replays_and_is_not_charged_again(run, alice, leads, funded):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    first = run(alice.live_key, headers={"Idempotency-Key": "k1"}, **ENRICH)
    again = run(alice.live_key, headers={"Idempotency-Key": "k1"}, **ENRICH)
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert len(responses.calls) == 1
    funded.refresh_from_db()
    assert funded.balance_micros == 1_000_000 - 50_000


@responses.activate
def test_the_same_key_for_a_different_request_is_a_422(run, alice, leads, funded):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    run(alice.live_key, headers={"Idempotency-Key": "k1"}, **ENRICH)
    other = run(
        alice.live_key,
        headers={"Idempotency-Key": "k1"},
        **{**ENRICH, "body": {"email": "other@b.c"}},
    )
    assert other.status_code == 422
    assert other.json()["code"] == "IDEMPOTENCY_MISMATCH"
    assert len(responses.calls) == 1


def test_a_key_still_in_flight_is_a_409(run, alice, leads, funded):
    idempotency_begin(
        api_key_id=api_key_row(alice.live_key).pk,
        key="k1",
        fingerprint=run_fingerprint(RunInput(**ENRICH, has_body=True)),
    )
    response = run(alice.live_key, headers={"Idempotency-Key": "k1"}, **ENRICH)
    assert response.status_code == 409
    assert response.json()["code"] == "IDEMPOTENCY_IN_PROGRESS"


@responses.activate
def test_keys_are_per_api_key(run, alice, leads, funded):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    run(alice.live_key, headers={"Idempotency-Key": "k1"}, **ENRICH)
    run(alice.test_key, headers={"Idempotency-Key": "k1"}, **ENRICH)
    assert IdempotencyRecord.objects.filter(key="k1").count() == 2


@responses.activate
def test_a_refused_request_can_be_retried_with_the_same_key(run, charlie, leads):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    refused = run(charlie.live_key, headers={"Idempotency-Key": "k2"}, **ENRICH)
    assert refused.status_code == 402
    fund(charlie.user, 1_000_000)
    retried = run(charlie.live_key, headers={"Idempotency-Key": "k2"}, **ENRICH)
    assert retried.status_code == 200
    assert "Idempotent-Replayed" not in retried


@responses.activate
def test_a_provider_failure_is_the_keys_final_answer(run, alice, leads, funded):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", status=404, json={"error": "nobody"})
    first = run(alice.live_key, headers={"Idempotency-Key": "k3"}, **ENRICH)
    again = run(alice.live_key, headers={"Idempotency-Key": "k3"}, **ENRICH)
    assert first.status_code == again.status_code == 404
    assert again.json() == first.json()
    assert len(responses.calls) == 1


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there"])
def test_a_malformed_key_is_refused(run, alice, leads, key):
    response = run(alice.live_key, headers={"Idempotency-Key": key}, **ENRICH)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["error"]


@responses.activate
def test_a_retry_sending_null_for_a_field_it_first_left_out_is_the_same_request(
    run, alice, leads, funded
):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    first = run(alice.live_key, headers={"Idempotency-Key": "k4"}, **ENRICH)
    again = run(alice.live_key, headers={"Idempotency-Key": "k4"}, **ENRICH, query=None)
    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert again["X-Request-Id"] == first["X-Request-Id"]
    assert len(responses.calls) == 1


@responses.activate
def test_expired_keys_are_purged_and_live_ones_kept(run, alice, leads, funded, settings):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    run(alice.live_key, headers={"Idempotency-Key": "old"}, **ENRICH)
    run(alice.live_key, headers={"Idempotency-Key": "new"}, **ENRICH)
    IdempotencyRecord.objects.filter(key="old").update(
        created_at=timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_KEY_TTL_SECONDS + 1)
    )

    call_command("purge_idempotency_keys")

    assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["new"]
