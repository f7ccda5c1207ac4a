"""Credentials the mpp rail refuses before the provider is called, each with a 402 that names
the protocol's reason and carries a fresh challenge: nothing is sent to the chain, nothing is
recorded, nothing is served."""

import time

import pytest
from mpp import Challenge

from catalog.services import catalog_version_bump
from rails.models import RailPayment
from tests.rails.mpp_chain import mpp_path, tempo_rpc
from tests.rails.mpp_payers import MppPayer

__all__ = ["tempo_rpc"]

pytestmark = pytest.mark.django_db(transaction=True)

OTHER_RECIPIENT = "0x000000000000000000000000000000000000dEaD"


def items() -> str:
    return mpp_path("leads", "/v1/items")


def assert_refused(response, provider, tempo_rpc, reason: str) -> dict:
    assert response.status_code == 402, response.content
    body = response.json()
    assert body["code"] == "PAYMENT_REQUIRED"
    assert reason in body["error"].lower(), body["error"]
    assert body["problem"]["type"].startswith("https://paymentauth.org/problems/")
    assert Challenge.from_www_authenticate(response["WWW-Authenticate"]).method == "tempo"
    assert body["offers"][0]["method"] == "mpp"
    assert provider.calls("/v1/items") == []
    assert not RailPayment.objects.exists()
    assert tempo_rpc.chain.receipts == {}
    return body


def test_a_transfer_of_the_wrong_amount_is_refused(leads, provider, tempo_rpc, rail_client):
    challenge = rail_client.get(items())
    authorization = MppPayer(tempo_rpc.url).authorization(challenge, amount="9999")

    response = rail_client.get(items(), HTTP_AUTHORIZATION=authorization)

    assert_refused(response, provider, tempo_rpc, "no matching payment call")


def test_a_transfer_to_another_recipient_is_refused(leads, provider, tempo_rpc, rail_client):
    challenge = rail_client.get(items())
    authorization = MppPayer(tempo_rpc.url).authorization(challenge, recipient=OTHER_RECIPIENT)

    response = rail_client.get(items(), HTTP_AUTHORIZATION=authorization)

    assert_refused(response, provider, tempo_rpc, "no matching payment call")


def test_an_expired_challenge_is_refused(leads, provider, tempo_rpc, rail_client, settings):
    settings.MPP_CHALLENGE_SECONDS = 1
    challenge = rail_client.get(items())
    authorization = MppPayer(tempo_rpc.url).authorization(challenge)
    time.sleep(1.2)

    response = rail_client.get(items(), HTTP_AUTHORIZATION=authorization)

    body = assert_refused(response, provider, tempo_rpc, "expired")
    assert body["problem"]["type"].endswith("/payment-expired")


def test_a_challenge_for_another_address_is_refused(leads, provider, tempo_rpc, rail_client):
    """Same price, same recipient: only the challenge's binding to the method, path and query
    tells a DELETE, or another query, from the GET it was issued for."""
    authorization = MppPayer(tempo_rpc.url).authorization(rail_client.get(items()))

    for response in (
        rail_client.delete(items(), HTTP_AUTHORIZATION=authorization),
        rail_client.get(items() + "?page=2", HTTP_AUTHORIZATION=authorization),
    ):
        assert_refused(response, provider, tempo_rpc, "another request")


def test_a_challenge_for_another_price_is_refused(leads, provider, tempo_rpc, rail_client):
    """A challenge issued before the endpoint's price changed no longer pays for it."""
    authorization = MppPayer(tempo_rpc.url).authorization(rail_client.get(items()))
    leads.items_get.price_micros = 20_000
    leads.items_get.save(update_fields=["price_micros"])
    catalog_version_bump()

    response = rail_client.get(items(), HTTP_AUTHORIZATION=authorization)

    assert_refused(response, provider, tempo_rpc, "does not match")
    assert Challenge.from_www_authenticate(response["WWW-Authenticate"]).request["amount"] == (
        "20000"
    )


def test_a_challenge_from_another_server_is_refused(
    leads, provider, tempo_rpc, rail_client, settings
):
    challenge = rail_client.get(items())
    authorization = MppPayer(tempo_rpc.url).authorization(challenge)
    settings.MPP_SECRET_KEY = "another server's secret"

    response = rail_client.get(items(), HTTP_AUTHORIZATION=authorization)

    assert_refused(response, provider, tempo_rpc, "not issued by this server")


def test_an_unreadable_credential_is_refused(leads, provider, tempo_rpc, rail_client):
    response = rail_client.get(items(), HTTP_AUTHORIZATION="Payment not-a-credential")

    body = assert_refused(response, provider, tempo_rpc, "")
    assert body["problem"]["type"].endswith("/malformed-credential")
