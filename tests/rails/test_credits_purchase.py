"""Buying credits in USDC: POST {X402_URL}/credits/purchase with a live gateway key, paid with
the official x402 Python client through the local facilitator double."""

import time

import pytest
from django.conf import settings
from django.core.management import call_command
from x402.http.utils import decode_payment_required_header, decode_payment_response_header

from credits.models import Account, LedgerEntry, Purchase
from credits.services.accounts import account_for_organization, account_for_user
from rails.models import RailPayment
from tests.rails.payers import Payer, signed_for

pytestmark = pytest.mark.django_db(transaction=True)

PURCHASE = f"{settings.X402_URL.removeprefix(settings.GATEWAY_BASE_URL)}/credits/purchase"
TEN_DOLLARS = {"amountCents": 1000}


def buyer() -> Payer:
    """A payer whose x402 client pays up to the purchase maximum: the client refuses any payment
    above $1 unless its spend controls say otherwise."""
    payer = Payer()
    payer.client.set_spend_controls({"max_amount_per_payment": "$1000"})
    return payer


def ask(client, body=None, headers=None):
    return client.post(PURCHASE, body or TEN_DOLLARS, format="json", headers=headers or {})


def paid(client, payer, body=None):
    """The purchase asked, then paid with the x402 client's answer to its 402."""
    challenge = ask(client, body)
    assert challenge.status_code == 402, challenge.content
    headers = payer.pay(challenge, f"http://testserver{PURCHASE}")
    return ask(client, body, headers), headers


def test_a_usdc_payment_books_a_purchase_for_the_keys_account(
    alice, client_for, facilitator, settings
):
    client = client_for(alice.live_key)
    payer = buyer()

    response, _ = paid(client, payer)

    assert response.status_code == 200, response.content
    body = response.json()
    purchase = Purchase.objects.get()
    assert body["purchase"]["id"] == purchase.public_id
    assert body["purchase"]["amountCents"] == 1000 and body["purchase"]["method"] == "usdc"
    assert body["balance"] == "$10.00"
    receipt = decode_payment_response_header(response["PAYMENT-RESPONSE"])
    assert receipt.success and receipt.transaction == purchase.payment_reference
    assert purchase.account == account_for_user(user=alice.user)
    assert purchase.amount_micros == 10_000_000
    payment = RailPayment.objects.get()
    assert payment.status == RailPayment.Status.SETTLED and payment.endpoint is None
    assert purchase.reference == f"rail:{payment.pk}"
    received = facilitator.chain.balance_of(receipt.network, settings.RAIL_PAY_TO)
    assert received == facilitator.chain.initial_balance + 10_000_000
    legs = LedgerEntry.objects.filter(event_ref=purchase.event_ref)
    assert sorted((leg.type, leg.amount_micros) for leg in legs) == [
        ("purchase", -10_000_000),
        ("purchase", 10_000_000),
    ]
    transactions = client.get("/v1/credits/transactions").json()["transactions"]
    assert transactions[0]["type"] == "purchase" and transactions[0]["amountCents"] == 1000
    assert transactions[0]["metadata"]["transaction"] == receipt.transaction
    call_command("check_ledger")


def test_the_402_asks_for_the_amount_asked_on_the_x402_networks(alice, client_for):
    response = ask(client_for(alice.live_key), {"amountCents": 2550})

    assert response.status_code == 402
    body = response.json()
    assert body["priceCents"] == 2550
    assert {offer["method"] for offer in body["offers"]} == {"x402"}
    assert {offer["amount"] for offer in body["offers"]} == {"25.5"}
    required = decode_payment_required_header(response["PAYMENT-REQUIRED"])
    assert {requirement.amount for requirement in required.accepts} == {"25500000"}
    assert required.resource.url.endswith("/rails/x402/credits/purchase")
    assert not RailPayment.objects.exists() and not Purchase.objects.exists()


def test_an_organization_key_buys_for_the_organization(alice, client_for, facilitator):
    response, _ = paid(client_for(alice.org_key), buyer())

    assert response.status_code == 200
    assert Purchase.objects.get().account == account_for_organization(
        organization=alice.organization
    )
    assert account_for_user(user=alice.user).balance_micros == 0


def test_a_payment_is_not_taken_twice(alice, client_for, facilitator):
    client = client_for(alice.live_key)
    first, headers = paid(client, buyer())
    assert first.status_code == 200

    replay = ask(client, headers=headers)

    assert replay.status_code == 402
    assert "already" in replay.json()["error"]  # the facilitator sees its nonce spent
    assert Purchase.objects.count() == 1
    assert account_for_user(user=alice.user).balance_micros == 10_000_000
    assert facilitator.app.settles_performed == 1


def test_a_payment_signed_for_a_smaller_amount_buys_nothing(alice, client_for, facilitator):
    client = client_for(alice.live_key)
    payer = buyer()
    cheap = payer.pay(ask(client, {"amountCents": 500}), f"http://testserver{PURCHASE}")

    response = ask(client, {"amountCents": 10_000}, cheap)

    assert response.status_code == 402
    assert "No matching payment requirements" in response.json()["error"]
    assert not Purchase.objects.exists()
    tampered = signed_for(payer, ask(client), amount="5000000")
    assert ask(client, headers=tampered).status_code == 402
    assert facilitator.app.settles_performed == 0


@pytest.mark.parametrize("key", [None, "gw_live_" + "x" * 43])
def test_a_caller_without_a_valid_key_is_refused_before_any_payment(key, client_for):
    response = ask(client_for(key))

    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHORIZED"
    assert "PAYMENT-REQUIRED" not in response


def test_a_test_key_is_refused_with_what_to_use_instead(alice, client_for):
    response = ask(client_for(alice.test_key))

    assert response.status_code == 403
    assert "Test keys" in response.json()["error"] and "gw_live_" in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"amountCents": 499}, "amountCents"),
        ({"amountCents": 100_001}, "amountCents"),
        ({"amountCents": 10.5}, "amountCents"),
        ({}, "amountCents"),
        ({"amountCents": 1000, "currency": "EUR"}, "currency"),
    ],
)
def test_an_amount_out_of_bounds_is_a_400_naming_it(alice, client_for, body, named):
    response = client_for(alice.live_key).post(PURCHASE, body, format="json")

    assert response.status_code == 400
    assert named in response.json()["error"]


def test_a_settlement_that_times_out_is_booked_once_when_reconciled(
    alice, client_for, facilitator, settings
):
    settings.RAIL_FACILITATOR_TIMEOUT_SECONDS = 0.3
    facilitator.app.settle_delay_seconds = 0.8
    client = client_for(alice.live_key)

    response, _ = paid(client, buyer())

    assert response.status_code == 202
    assert response.json()["settlement"] == "pending"
    assert response["Payment-Settlement"] == "pending"
    assert not Purchase.objects.exists()
    facilitator.app.settle_delay_seconds = 0
    time.sleep(0.8)  # the slow settlement has gone through meanwhile
    call_command("rails_reconcile")
    call_command("rails_reconcile")

    assert Purchase.objects.get().amount_micros == 10_000_000
    assert client.get("/v1/credits/balance").json()["balance"] == "$10.00"
    call_command("check_ledger")


def test_a_refused_settlement_books_nothing(alice, client_for, facilitator):
    facilitator.app.fail_next_settles(1)

    response, _ = paid(client_for(alice.live_key), buyer())

    assert response.status_code == 402
    assert "could not be settled" in response.json()["error"]
    assert RailPayment.objects.get().status == RailPayment.Status.FAILED
    assert not Purchase.objects.exists()
    assert Account.objects.get(user=alice.user).balance_micros == 0


def test_the_route_is_off_with_the_rails(alice, client_for, settings):
    settings.RAILS_ENABLED = False

    assert ask(client_for(alice.live_key)).status_code == 404


def test_the_x402_rail_describes_the_purchase(rail_client):
    document = rail_client.get(PURCHASE.removesuffix("/credits/purchase") + "/openapi.json").json()

    operation = document["paths"]["/credits/purchase"]["post"]
    assert operation["security"] == [{"bearerAuth": []}]
    amount = operation["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert amount["amountCents"]["minimum"] == 500 and amount["amountCents"]["maximum"] == 100_000
