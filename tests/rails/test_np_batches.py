"""The np rail: x402 v2 payments against the batched EIP-3009 domain, served at once and settled
in batches by ``settle_np_batches``, exactly once even when a batch's answer is lost."""

import pytest
from django.core.management import call_command
from x402.http.utils import decode_payment_response_header

from credits.models import Account, LedgerEntry
from rails.models import RailPayment, SettlementBatch
from tests.rails.conftest import x402_path
from tests.rails.payers import Payer

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = x402_path("leads", "/v1/items").replace("/x402/", "/np/", 1)


def pay_np(rail_client, payer=None):
    payer = payer or Payer()
    challenge = rail_client.get(ITEMS)
    assert challenge.status_code == 402
    return rail_client.get(ITEMS, headers=payer.pay(challenge, f"http://testserver{ITEMS}"))


def revenue(leads) -> int:
    return Account.objects.get(organization=leads.owner).balance_micros


def test_np_payment_is_served_then_settled_in_one_batch(leads, provider, facilitator, rail_client):
    answers = [pay_np(rail_client) for _ in range(3)]

    assert [answer.status_code for answer in answers] == [200, 200, 200]
    receipt = decode_payment_response_header(answers[0]["PAYMENT-RESPONSE"])
    assert receipt.success
    assert set(RailPayment.objects.values_list("status", flat=True)) == {"batched"}
    assert not Account.objects.filter(organization=leads.owner).exists() or revenue(leads) == 0

    call_command("settle_np_batches")

    batch = SettlementBatch.objects.get()
    assert batch.status == SettlementBatch.Status.SETTLED and batch.payment_count == 3
    assert set(RailPayment.objects.values_list("status", flat=True)) == {"settled"}
    assert facilitator.app.batches_performed == 1
    assert revenue(leads) == 3 * 9_000

    call_command("settle_np_batches")  # nothing left: nothing settles twice

    assert SettlementBatch.objects.count() == 1
    assert LedgerEntry.objects.filter(type=LedgerEntry.Type.RAIL_REVENUE).count() == 3
    call_command("check_ledger")


def test_a_batch_whose_answer_was_lost_settles_once(leads, provider, facilitator, rail_client):
    pay_np(rail_client)
    pay_np(rail_client)
    facilitator.app.crashes_after_settle_left = 1

    call_command("settle_np_batches")  # the chain took the batch, the answer never came

    batch = SettlementBatch.objects.get()
    assert batch.status == SettlementBatch.Status.SUBMITTING
    assert set(RailPayment.objects.values_list("status", flat=True)) == {"batched"}

    call_command("settle_np_batches")  # asked again with the same batch id

    batch.refresh_from_db()
    assert batch.status == SettlementBatch.Status.SETTLED and batch.attempts == 2
    assert facilitator.app.batches_performed == 1
    assert set(RailPayment.objects.values_list("status", flat=True)) == {"settled"}
    assert revenue(leads) == 2 * 9_000
    call_command("check_ledger")


def test_np_takes_no_x402_v1_payment(leads, provider, facilitator, rail_client):
    challenge = rail_client.get(x402_path("leads", "/v1/items"))
    v1 = Payer().pay_v1(challenge)

    response = rail_client.get(ITEMS, headers={"PAYMENT-SIGNATURE": v1["X-PAYMENT"]})

    assert response.status_code == 402
    assert "version 2" in response.json()["error"]
