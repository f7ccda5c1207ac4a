"""Payments the x402 rail refuses, each with a 402 that says why and repeats the challenge, and
one signed payment sent by 8 callers at once: served and settled once."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from rest_framework.test import APIClient

from rails.models import RailPayment
from tests.rails.conftest import x402_path
from tests.rails.payers import Payer, signed_for, tampered

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = x402_path("leads", "/v1/items")
ENRICH = x402_path("leads", "/v1/people/enrich")
OTHER_WALLET = "0x000000000000000000000000000000000000bEEF"


def refused(rail_client, headers, path=ITEMS):
    response = rail_client.get(path, headers=headers)
    assert response.status_code == 402, response.content
    assert "PAYMENT-REQUIRED" in response
    return response.json()["error"]


@pytest.fixture
def challenge(rail_client, provider, facilitator):
    return rail_client.get(ITEMS)


def test_tampered_amount_is_refused(challenge, rail_client, provider):
    headers = signed_for(Payer(), challenge)

    reason = refused(rail_client, tampered(headers, value="1"))

    assert "signature" in reason or "value" in reason
    assert provider.calls("/v1/items") == []


def test_payment_to_another_recipient_is_refused(challenge, rail_client, provider):
    reason = refused(rail_client, signed_for(Payer(), challenge, pay_to=OTHER_WALLET))

    assert reason == "No matching payment requirements"


def test_payment_on_another_network_is_refused(challenge, rail_client, provider):
    reason = refused(
        rail_client,
        signed_for(
            Payer(),
            challenge,
            network="eip155:84532",
            asset="0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            extra={"name": "USDC", "version": "2"},
        ),
    )

    assert reason == "No matching payment requirements"


def test_payment_of_a_cheaper_call_is_refused(rail_client, provider, facilitator):
    cheap = rail_client.get(ITEMS)
    headers = signed_for(Payer(), cheap)

    response = rail_client.post(ENRICH, {"email": "a@b.co"}, format="json", headers=headers)

    assert response.status_code == 402
    assert response.json()["error"] == "No matching payment requirements"
    assert provider.calls("/v1/people/enrich") == []


def test_expired_payment_is_refused(rail_client, provider, facilitator, settings):
    settings.RAIL_PAYMENT_MAX_TIMEOUT_SECONDS = 1
    headers = signed_for(Payer(), rail_client.get(ITEMS))
    time.sleep(1.5)

    reason = refused(rail_client, headers)

    assert "valid_before" in reason
    assert provider.calls("/v1/items") == []


def test_unreadable_payment_is_refused(challenge, rail_client):
    reason = refused(rail_client, {"PAYMENT-SIGNATURE": "not base64 json"})

    assert "not a base64-encoded x402 payment" in reason


def test_one_payment_sent_by_8_callers_is_served_and_settled_once(challenge, provider, facilitator):
    headers = signed_for(Payer(), challenge)
    barrier = threading.Barrier(8)

    def call(_):
        try:
            barrier.wait()
            return APIClient().get(ITEMS, headers=headers).status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = sorted(pool.map(call, range(8)))

    assert statuses == [200] + [402] * 7
    assert len(provider.calls("/v1/items")) == 1
    assert facilitator.app.settles_performed == 1
    assert RailPayment.objects.get().status == RailPayment.Status.SETTLED
