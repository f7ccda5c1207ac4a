"""The mpp rail's money rules, with the SDK's tempo payer and a provider double: a challenge
costs nothing, a payment is claimed before the provider is called and broadcast only after it
answered, a provider failure leaves the payer's signed transfer unsent, and the provider's
organization is booked its revenue."""

import asyncio

import pytest
from django.core.management import call_command
from django.db.models import Sum
from mpp import Challenge, Credential, Receipt

from credits.models import Account, LedgerEntry
from rails.models import MppReplayKey, RailPayment
from tests.http_double import Reply, closed_port
from tests.rails.mpp_chain import mpp_path, recipient_balance, tempo_rpc
from tests.rails.mpp_payers import MppPayer

__all__ = ["tempo_rpc"]

pytestmark = pytest.mark.django_db(transaction=True)

PRICE = 10_000  # leads GET /v1/items


def items() -> str:
    return mpp_path("leads", "/v1/items")


def paid(rail_client, payer: MppPayer, path: str, **changes) -> dict:
    """The Authorization header paying the challenge ``path`` answers (as request kwargs)."""
    challenge = rail_client.get(path)
    assert challenge.status_code == 402, challenge.content
    return {"HTTP_AUTHORIZATION": payer.authorization(challenge, **changes)}


def test_an_unpaid_request_gets_the_offers_and_an_mpp_challenge(
    leads, provider, tempo_rpc, rail_client, settings
):
    response = rail_client.get(items())

    assert response.status_code == 402
    body = response.json()
    assert body["code"] == "PAYMENT_REQUIRED"
    assert [offer["method"] for offer in body["offers"]] == ["mpp", "x402", "x402", "np"]
    assert body["offers"][0]["currency"] == "USDC.e"
    assert response["Cache-Control"] == "no-store"
    challenge = Challenge.from_www_authenticate(response["WWW-Authenticate"])
    assert (challenge.method, challenge.intent) == ("tempo", "charge")
    assert challenge.request["amount"] == str(PRICE)
    assert challenge.request["currency"] == settings.MPP_CURRENCY
    assert challenge.request["recipient"] == settings.RAIL_PAY_TO
    assert challenge.request["methodDetails"]["chainId"] == 4217
    assert challenge.expires
    # A challenge asks nothing of the chain, the database or the provider.
    assert not tempo_rpc.chain.calls
    assert not RailPayment.objects.exists() and not MppReplayKey.objects.exists()
    assert provider.calls("/v1/items") == []


def test_a_paid_request_is_served_settled_and_booked(leads, provider, tempo_rpc, rail_client):
    payer = MppPayer(tempo_rpc.url)

    response = rail_client.get(items(), **paid(rail_client, payer, items()))

    assert response.status_code == 200, response.content
    assert response.json() == {"items": [1, 2, 3]}
    receipt = Receipt.from_payment_receipt(response["Payment-Receipt"])
    assert (receipt.status, receipt.method) == ("success", "tempo")
    payment = RailPayment.objects.get()
    assert (payment.protocol, payment.status, payment.amount_micros) == ("mpp", "settled", PRICE)
    assert payment.network == "eip155:4217"
    assert payment.payer == payer.address.lower()
    assert payment.transaction == receipt.reference == payment.nonce
    assert recipient_balance(tempo_rpc.chain) == PRICE
    revenue = LedgerEntry.objects.filter(
        account=Account.objects.get(organization=leads.owner), type=LedgerEntry.Type.RAIL_REVENUE
    ).aggregate(total=Sum("amount_micros"))["total"]
    fee = LedgerEntry.objects.get(type=LedgerEntry.Type.RAIL_FEE).amount_micros
    assert revenue > 0 and revenue + fee == PRICE
    call_command("check_ledger")


def test_a_replayed_credential_is_refused(leads, provider, tempo_rpc, rail_client):
    authorization = paid(rail_client, MppPayer(tempo_rpc.url), items())
    assert rail_client.get(items(), **authorization).status_code == 200

    replay = rail_client.get(items(), **authorization)

    assert replay.status_code == 403
    assert replay.json()["code"] == "PAYMENT_REFUSED"
    assert "WWW-Authenticate" not in replay  # a fresh challenge would invite paying again
    assert len(provider.calls("/v1/items")) == 1
    assert len(tempo_rpc.chain.receipts) == 1
    assert recipient_balance(tempo_rpc.chain) == PRICE


def test_provider_failure_sends_nothing_and_the_credential_can_be_retried(
    leads, provider, tempo_rpc, rail_client
):
    authorization = paid(rail_client, MppPayer(tempo_rpc.url), items())
    provider.routes["/v1/items"] = Reply(503, {"error": "down for maintenance"})

    failed = rail_client.get(items(), **authorization)

    assert failed.status_code >= 500
    assert "Payment-Receipt" not in failed
    assert RailPayment.objects.get().status == "released"
    assert tempo_rpc.chain.receipts == {}
    assert recipient_balance(tempo_rpc.chain) == 0

    provider.routes["/v1/items"] = Reply(200, {"items": []})
    retried = rail_client.get(items(), **authorization)

    assert retried.status_code == 200
    assert RailPayment.objects.filter(status="settled").count() == 1
    assert recipient_balance(tempo_rpc.chain) == PRICE


def test_a_refused_settlement_withholds_the_answer(
    leads, provider, tempo_rpc, rail_client, settings
):
    payer = MppPayer(tempo_rpc.url)
    authorization = paid(rail_client, payer, items())
    tempo_rpc.chain.set_balance(settings.MPP_CURRENCY, payer.address, PRICE - 1)

    response = rail_client.get(items(), **authorization)

    assert response.status_code == 402
    assert "reverted" in response.json()["error"]
    assert "items" not in response.json()
    assert RailPayment.objects.get().status == "failed"
    assert not LedgerEntry.objects.filter(type=LedgerEntry.Type.RAIL_REVENUE).exists()


def test_an_rpc_outage_is_503_and_nothing_is_charged_or_served(
    leads, provider, tempo_rpc, rail_client, settings
):
    authorization = paid(rail_client, MppPayer(tempo_rpc.url), items())
    settings.MPP_RPC_URL = f"http://127.0.0.1:{closed_port()}"

    response = rail_client.get(items(), **authorization)

    assert response.status_code == 503
    assert response.json()["success"] is False
    assert response.json()["code"] == "PAYMENT_UNAVAILABLE"
    assert provider.calls("/v1/items") == []
    assert not RailPayment.objects.exists()
    assert tempo_rpc.chain.receipts == {}


def test_a_settlement_of_unknown_outcome_is_served_pending_and_reconciled_from_its_receipt(
    leads, provider, tempo_rpc, rail_client, settings
):
    authorization = paid(rail_client, MppPayer(tempo_rpc.url), items())
    settings.MPP_RPC_TIMEOUT_SECONDS = 0.6
    tempo_rpc.app.stalled.add("eth_sendRawTransactionSync")

    response = rail_client.get(items(), **authorization)

    assert response.status_code == 200  # sent, and served: the payer never pays twice
    assert response["Payment-Settlement"] == "pending"
    assert "Payment-Receipt" not in response
    payment = RailPayment.objects.get()
    assert payment.status == "pending"
    assert not LedgerEntry.objects.filter(type=LedgerEntry.Type.RAIL_REVENUE).exists()
    tempo_rpc.app.stalled.clear()
    assert rail_client.get(items(), **authorization).status_code == 403

    call_command("rails_reconcile")  # not mined: still pending
    assert RailPayment.objects.get().status == "pending"

    credential = Credential.from_authorization(authorization["HTTP_AUTHORIZATION"])
    tempo_rpc.chain.include(credential.payload["signature"])  # the node did take it
    call_command("rails_reconcile")
    call_command("rails_reconcile")

    payment.refresh_from_db()
    assert payment.status == "settled" and payment.transaction == payment.nonce
    assert LedgerEntry.objects.filter(type=LedgerEntry.Type.RAIL_REVENUE).count() == 1
    call_command("check_ledger")


def test_a_transfer_the_payer_already_sent_pays_by_its_hash(
    leads, provider, tempo_rpc, rail_client
):
    """Push mode: the payer broadcasts its transfer and presents the transaction's hash."""
    payer = MppPayer(tempo_rpc.url)
    challenge = Challenge.from_www_authenticate(rail_client.get(items())["WWW-Authenticate"])
    signed = asyncio.run(payer.credential(challenge))
    sent = tempo_rpc.chain.include(signed.payload["signature"])
    by_hash = Credential(
        challenge=signed.challenge,
        payload={"type": "hash", "hash": sent["transactionHash"]},
        source=signed.source,
    ).to_authorization()

    response = rail_client.get(items(), HTTP_AUTHORIZATION=by_hash)
    replay = rail_client.get(items(), HTTP_AUTHORIZATION=by_hash)

    assert response.status_code == 200, response.content
    assert (
        Receipt.from_payment_receipt(response["Payment-Receipt"]).reference
        == (sent["transactionHash"])
    )
    payment = RailPayment.objects.get()
    assert (payment.status, payment.nonce) == ("settled", sent["transactionHash"])
    assert replay.status_code == 403
    assert len(provider.calls("/v1/items")) == 1
    assert recipient_balance(tempo_rpc.chain) == PRICE
