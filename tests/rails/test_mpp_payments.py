"""The official pympp client pays for seed-catalog endpoints on the mpp rail of the live test
server, settling on a local Tempo chain, and the provider's organization sees the revenue; one
credential pays for one call however many requests, or gateway processes, it is sent to."""

import json
import threading

import httpx
import pytest
from django.core.management import call_command
from mpp import Challenge, Receipt

from credits.models import Account, LedgerEntry
from rails.models import MppReplayKey, RailPayment
from tests.rails.mpp_chain import MppRail, mpp_rail, recipient_balance, tempo_rpc
from tests.rails.mpp_payers import MppPayer
from tests.rails.mpp_processes import gunicorn_gateway

__all__ = ["mpp_rail", "tempo_rpc"]

pytestmark = pytest.mark.django_db(transaction=True)

VERIFY = "/hunter/v2/email-verifier"
CHAT = "/zhipu-glm/api/paas/v4/chat/completions"


def provider_revenue(payment: RailPayment) -> int:
    account = Account.objects.get(organization=payment.endpoint.api.owner)
    return sum(
        LedgerEntry.objects.filter(account=account, type=LedgerEntry.Type.RAIL_REVENUE).values_list(
            "amount_micros", flat=True
        )
    )


def test_the_sdk_client_pays_a_seed_endpoint(mpp_rail: MppRail):
    payer = MppPayer(mpp_rail.rpc_url)

    response = payer.fetch(f"{mpp_rail.url}{VERIFY}?email=ada@stripe.com")

    assert response.status_code == 200, response.text
    assert response.json()["data"]["email"] == "ada@stripe.com"
    receipt = Receipt.from_payment_receipt(response.headers["Payment-Receipt"])
    assert receipt.status == "success"
    payment = RailPayment.objects.get()
    assert (payment.protocol, payment.status, payment.amount_micros) == ("mpp", "settled", 5_000)
    assert payment.payer == payer.address.lower()
    assert payment.transaction == receipt.reference == payment.nonce
    assert recipient_balance(mpp_rail.chain) == 5_000
    assert MppReplayKey.objects.filter(key=f"mpp:charge:{receipt.reference}").exists()
    assert provider_revenue(payment) > 0
    call_command("check_ledger")


def test_the_sdk_client_pays_for_a_chat_completion_at_its_maximum(mpp_rail: MppRail):
    body = {
        "model": "glm-4.5",
        "messages": [{"role": "user", "content": "Say hello in one word."}],
        "max_tokens": 64,
    }
    unpaid = httpx.post(f"{mpp_rail.url}{CHAT}", json=body, timeout=30)
    assert unpaid.status_code == 402
    maximum = int(
        Challenge.from_www_authenticate(unpaid.headers["WWW-Authenticate"]).request["amount"]
    )

    response = MppPayer(mpp_rail.rpc_url).fetch(f"{mpp_rail.url}{CHAT}", method="POST", json=body)

    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"]
    payment = RailPayment.objects.get()
    assert payment.status == "settled"
    assert payment.amount_micros == maximum > 0
    assert recipient_balance(mpp_rail.chain) == maximum
    assert provider_revenue(payment) > 0
    call_command("check_ledger")


def test_the_sdk_client_pays_and_streams_a_chat_completion(mpp_rail: MppRail):
    body = {
        "model": "glm-4.5",
        "messages": [{"role": "user", "content": "Explain pay-per-call rails in a few words"}],
        "stream": True,
    }

    response = MppPayer(mpp_rail.rpc_url).fetch(f"{mpp_rail.url}{CHAT}", method="POST", json=body)

    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/event-stream"
    assert Receipt.from_payment_receipt(response.headers["Payment-Receipt"]).status == "success"
    events = [event for event in response.text.split("\n\n") if event.strip()]
    assert events[-1] == "data: [DONE]"
    assert json.loads(events[-2].removeprefix(": gateway "))["ending"] == "completed"
    pieces = [
        json.loads(event.removeprefix("data: "))["choices"][0]["delta"].get("content")
        for event in events
        if event.startswith("data: {")
    ]
    assert len([piece for piece in pieces if piece]) > 3
    payment = RailPayment.objects.get(request_id=response.headers["X-Request-Id"])
    # Paid in full before the first event: the most the call can cost, whatever it came to.
    assert payment.status == "settled"
    assert payment.amount_micros == int(float(response.headers["X-Price-Max-Cents"]) * 10_000)
    assert recipient_balance(mpp_rail.chain) == payment.amount_micros > 0
    assert provider_revenue(payment) > 0
    call_command("check_ledger")


def send_together(requests: list[tuple[str, str]]) -> list[httpx.Response]:
    """Send ``(url, authorization)`` requests at once, one thread each."""
    start = threading.Barrier(len(requests))
    responses: list = [None] * len(requests)

    def send(index: int, url: str, authorization: str) -> None:
        start.wait()
        responses[index] = httpx.get(url, headers={"Authorization": authorization}, timeout=60)

    threads = [
        threading.Thread(target=send, args=(index, url, authorization))
        for index, (url, authorization) in enumerate(requests)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return responses


def test_eight_concurrent_requests_with_one_credential_call_the_provider_once(
    live_server, leads, provider, tempo_rpc, settings
):
    settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS = True
    settings.RATE_LIMIT_ENABLED = False
    settings.MPP_URL = f"{live_server.url}/rails/mpp"
    url = f"{settings.MPP_URL}/leads/v1/items"
    authorization = MppPayer(tempo_rpc.url).authorization(httpx.get(url, timeout=30))

    responses = send_together([(url, authorization)] * 8)

    assert sorted(response.status_code for response in responses) == [200] + [403] * 7
    assert len(provider.calls("/v1/items")) == 1
    assert len(tempo_rpc.chain.receipts) == 1
    assert RailPayment.objects.get().status == "settled"


def test_a_credential_pays_once_across_two_gateway_processes(mpp_rail: MppRail, settings, tmp_path):
    settings.MPP_REALM = "gateway.test"
    settings.MPP_SECRET_KEY = "the secret every gateway process shares"
    settings.RATE_LIMIT_ENABLED = False
    path = f"{VERIFY}?email=ada@stripe.com"
    payer = MppPayer(mpp_rail.rpc_url)

    with gunicorn_gateway(tmp_path) as other:
        other_url = f"{other}/rails/mpp{path}"
        # Paid in one process, replayed in the other.
        first = payer.authorization(httpx.get(f"{mpp_rail.url}{path}", timeout=30))
        paid = httpx.get(other_url, headers={"Authorization": first}, timeout=60)
        assert paid.status_code == 200, paid.text
        replay = httpx.get(f"{mpp_rail.url}{path}", headers={"Authorization": first}, timeout=60)
        assert replay.status_code == 403
        # One fresh credential sent to both processes at once.
        second = payer.authorization(httpx.get(other_url, timeout=30))
        responses = send_together([(f"{mpp_rail.url}{path}", second), (other_url, second)] * 4)

    assert sorted(response.status_code for response in responses) == [200] + [403] * 7
    assert RailPayment.objects.filter(status="settled").count() == 2
    assert len(mpp_rail.chain.receipts) == 2
    assert recipient_balance(mpp_rail.chain) == 2 * 5_000
    call_command("check_ledger")
