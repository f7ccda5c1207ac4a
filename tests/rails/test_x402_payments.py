"""Paying on the x402 rail with the official x402 Python client, through the local facilitator
double: the provider is called once per payment, settled only when it answered, and the
provider organization's revenue is booked."""

import pytest
from django.core.management import call_command
from x402.http.utils import decode_payment_response_header

from credits.models import Account, LedgerEntry
from rails.models import RailPayment
from tests.rails.conftest import x402_path
from tests.rails.payers import Payer

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = x402_path("leads", "/v1/items")
ITEMS_URL_SUFFIX = "/rails/x402/leads/v1/items"


def paid_get(rail_client, payer, path=ITEMS):
    challenge = rail_client.get(path)
    assert challenge.status_code == 402
    headers = payer.pay(challenge, f"http://testserver{path}")
    return rail_client.get(path, headers=headers), headers


def organization_balance(leads) -> int:
    return Account.objects.get(organization=leads.owner).balance_micros


def test_v2_payment_is_served_settled_and_booked(
    leads, provider, facilitator, rail_client, settings
):
    payer = Payer()

    response, _ = paid_get(rail_client, payer)

    assert response.status_code == 200
    assert response.json() == {"items": [1, 2, 3]}
    receipt = decode_payment_response_header(response["PAYMENT-RESPONSE"])
    assert receipt.success and receipt.transaction.startswith("0x")
    payment = RailPayment.objects.get()
    assert payment.status == RailPayment.Status.SETTLED
    assert payment.payer == payer.address.lower() and payment.amount_micros == 10_000
    assert payment.transaction == receipt.transaction
    assert payment.request_id == response["X-Request-Id"]
    assert organization_balance(leads) == 9_000  # 10,000 less the platform's 10% fee
    fee = LedgerEntry.objects.get(type=LedgerEntry.Type.RAIL_FEE)
    assert fee.amount_micros == 1_000
    network = receipt.network
    received = facilitator.chain.balance_of(network, settings.RAIL_PAY_TO)
    assert received == facilitator.chain.initial_balance + 10_000
    call_command("check_ledger")


def test_v1_payment_is_served_with_the_v1_receipt(leads, provider, facilitator, rail_client):
    payer = Payer()
    challenge = rail_client.get(ITEMS)

    response = rail_client.get(ITEMS, headers=payer.pay_v1(challenge))

    assert response.status_code == 200
    receipt = decode_payment_response_header(response["X-PAYMENT-RESPONSE"])
    assert receipt.success
    payment = RailPayment.objects.get()
    assert (payment.x402_version, payment.network) == (1, "base")
    assert payment.status == RailPayment.Status.SETTLED


def test_a_payment_is_not_taken_twice(leads, provider, facilitator, rail_client):
    payer = Payer()
    response, headers = paid_get(rail_client, payer)
    assert response.status_code == 200

    replay = rail_client.get(ITEMS, headers=headers)

    assert replay.status_code == 402
    assert "PAYMENT-REQUIRED" in replay
    assert len(provider.calls("/v1/items")) == 1
    assert facilitator.app.settles_performed == 1


def test_provider_failure_settles_nothing_and_the_payment_can_be_retried(
    leads, provider, facilitator, rail_client
):
    from tests.http_double import Reply

    provider.routes["/v1/items"] = Reply(503, {"error": "down for maintenance"})
    payer = Payer()
    failed, headers = paid_get(rail_client, payer)

    assert failed.status_code == 502
    assert failed.json()["data"] == {"error": "down for maintenance"}
    assert RailPayment.objects.get().status == RailPayment.Status.RELEASED
    assert facilitator.app.settles_performed == 0

    provider.routes["/v1/items"] = Reply(200, {"items": []})
    retried = rail_client.get(ITEMS, headers=headers)

    assert retried.status_code == 200
    statuses = sorted(RailPayment.objects.values_list("status", flat=True))
    assert statuses == ["released", "settled"]
    assert facilitator.app.settles_performed == 1


def test_refused_settlement_withholds_the_answer(leads, provider, facilitator, rail_client):
    facilitator.app.fail_next_settles(1)
    payer = Payer()

    response, _ = paid_get(rail_client, payer)

    assert response.status_code == 402
    assert '"items":' not in response.content.decode()
    assert "could not be settled" in response.json()["error"]
    payment = RailPayment.objects.get()
    assert payment.status == RailPayment.Status.FAILED
    assert not LedgerEntry.objects.filter(type=LedgerEntry.Type.RAIL_REVENUE).exists()


def test_settlement_that_times_out_is_pending_then_reconciled_once(
    leads, provider, facilitator, rail_client, settings
):
    settings.RAIL_FACILITATOR_TIMEOUT_SECONDS = 0.3
    facilitator.app.settle_delay_seconds = 0.8
    payer = Payer()

    response, _ = paid_get(rail_client, payer)

    assert response.status_code == 200  # served: the claimed authorization is settled later
    assert response["Payment-Settlement"] == "pending"
    assert RailPayment.objects.get().status == RailPayment.Status.PENDING

    facilitator.app.settle_delay_seconds = 0
    import time

    time.sleep(0.8)  # the slow settlement has gone through meanwhile
    call_command("rails_reconcile")
    call_command("rails_reconcile")

    payment = RailPayment.objects.get()
    assert payment.status == RailPayment.Status.SETTLED
    assert LedgerEntry.objects.filter(type=LedgerEntry.Type.RAIL_REVENUE).count() == 1
    assert organization_balance(leads) == 9_000
    call_command("check_ledger")


def test_verification_that_cannot_reach_the_facilitator_is_503(
    leads, provider, facilitator, rail_client, settings
):
    payer = Payer()
    challenge = rail_client.get(ITEMS)
    headers = payer.pay(challenge, f"http://testserver{ITEMS}")
    settings.X402_FACILITATOR_URL = "http://127.0.0.1:9"

    response = rail_client.get(ITEMS, headers=headers)

    assert response.status_code == 503
    assert response.json()["code"] == "PAYMENT_UNAVAILABLE"
    assert provider.calls("/v1/items") == []
    assert RailPayment.objects.count() == 0


def test_the_provider_organization_sees_rail_revenue(
    leads, provider, facilitator, rail_client, alice, client_for
):
    from django.test import Client

    leads.api.owner = alice.organization
    leads.api.save(update_fields=["owner"])

    paid, _ = paid_get(rail_client, Payer())
    balance = client_for(alice.org_key).get("/v1/credits/balance").json()
    transactions = client_for(alice.org_key).get("/v1/credits/transactions").json()
    browser = Client()
    browser.force_login(alice.user)
    page = browser.get(f"/orgs/{alice.organization.slug}")

    assert paid.status_code == 200
    assert balance["balance"] == "$0.009"
    assert {"rail_revenue"} == {item["type"] for item in transactions["transactions"]}
    assert page.context["revenue_total_micros"] == 9_000
    assert [row.api for row in page.context["revenue"]] == ["leads"]


def test_the_operator_sees_every_payment_in_the_admin(
    leads, provider, facilitator, rail_client, client
):
    from gateway.models import User

    paid, _ = paid_get(rail_client, Payer())
    client.force_login(User.objects.create_superuser(email="op@example.com", password="pw"))

    listing = client.get("/admin/rails/railpayment/", {"q": paid["X-Request-Id"]})
    payment = RailPayment.objects.get()
    page = client.get(f"/admin/rails/railpayment/{payment.pk}/change/")

    assert listing.status_code == 200 and payment.payer in listing.content.decode()
    assert page.status_code == 200 and payment.transaction in page.content.decode()
    assert client.get("/admin/rails/settlementbatch/").status_code == 200
