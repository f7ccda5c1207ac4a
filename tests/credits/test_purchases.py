"""Purchases in the ledger: booked once per payment, taken back by refunds and disputes, which
may leave the balance negative; a negative balance pays for nothing."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connections

from credits.models import Account, LedgerEntry, Purchase
from credits.services.accounts import account_for_user, account_platform
from credits.services.holds import hold_capture, hold_reserve
from credits.services.ledger import credits_adjust
from credits.services.purchases import (
    purchase_amount_validate,
    purchase_book,
    purchase_dispute,
    purchase_refund,
)
from gateway.errors import Conflict, InsufficientCredits, InvalidRequest
from gateway.models import User
from tests.factories import make_persona, provider_account

pytestmark = pytest.mark.usefixtures("both_settlements")

TEN_DOLLARS = 10_000_000


def buy(account, amount=TEN_DOLLARS, reference="cs_test_1") -> Purchase:
    return purchase_book(
        account_id=account.pk,
        method=Purchase.Method.CARD,
        reference=reference,
        amount_micros=amount,
        description="Credits bought by card",
        payment_reference=f"pi_{reference}",
    )


def spend(account, amount, request_id):
    hold_reserve(account=account, amount_micros=amount, request_id=request_id)
    hold_capture(
        request_id=request_id,
        amount_micros=amount,
        provider_account=provider_account(),
        description="a call",
    )


def balance(account) -> int:
    return Account.objects.with_balance().get(pk=account.pk).balance_micros


def test_a_purchase_credits_the_buyer_against_the_platform_once(alice):
    account = account_for_user(user=alice.user)

    first = buy(account)
    again = buy(account)

    assert first.pk == again.pk and Purchase.objects.count() == 1
    assert balance(account) == TEN_DOLLARS
    legs = LedgerEntry.objects.filter(event_ref=first.event_ref)
    assert {(leg.account_id, leg.type, leg.amount_micros) for leg in legs} == {
        (account.pk, "purchase", TEN_DOLLARS),
        (account_platform().pk, "purchase", -TEN_DOLLARS),
    }
    mine = legs.get(account=account)
    assert mine.metadata["purchaseId"] == first.public_id
    assert mine.metadata["method"] == "card" and mine.balance_after_micros == TEN_DOLLARS
    call_command("check_ledger")


@pytest.mark.django_db(transaction=True)
def test_one_payment_announced_by_8_deliveries_at_once_is_credited_once():
    persona = make_persona("racer@example.com")
    account = account_for_user(user=persona.user)
    barrier = threading.Barrier(8)

    def deliver(_):
        try:
            barrier.wait()
            return buy(account).pk
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=8) as pool:
        purchases = set(pool.map(deliver, range(8)))

    assert len(purchases) == 1
    assert balance(account) == TEN_DOLLARS
    assert LedgerEntry.objects.filter(type="purchase").count() == 2
    call_command("check_ledger")


def test_a_refund_after_the_credits_were_spent_leaves_the_balance_negative(alice):
    account = account_for_user(user=alice.user)
    purchase = buy(account)
    spend(account, 8_000_000, "run_spent")

    purchase_refund(purchase=purchase, refunded_micros=TEN_DOLLARS, reason="Card refund")

    assert balance(account) == -8_000_000
    refund = LedgerEntry.objects.get(account=account, type="refund")
    assert refund.amount_micros == -TEN_DOLLARS and refund.balance_after_micros == -8_000_000
    assert refund.metadata["refundOf"] == purchase.event_ref
    purchase.refresh_from_db()
    assert purchase.refunded_micros == TEN_DOLLARS
    call_command("check_ledger")


def test_a_negative_balance_pays_for_nothing_until_it_is_topped_up(alice):
    account = account_for_user(user=alice.user)
    purchase = buy(account)
    spend(account, 8_000_000, "run_spent")
    purchase_refund(purchase=purchase, refunded_micros=TEN_DOLLARS, reason="Card refund")

    with pytest.raises(InsufficientCredits, match=r"\$0.00 is available"):
        hold_reserve(account=account, amount_micros=10_000, request_id="run_refused")
    buy(account, amount=5_000_000, reference="cs_test_2")
    with pytest.raises(InsufficientCredits):
        hold_reserve(account=account, amount_micros=10_000, request_id="run_still_short")
    buy(account, amount=5_000_000, reference="cs_test_3")
    hold_reserve(account=account, amount_micros=10_000, request_id="run_paid")

    assert balance(account) == 2_000_000
    call_command("check_ledger")


def test_a_refund_while_a_call_holds_funds_lets_that_call_settle(alice):
    account = account_for_user(user=alice.user)
    purchase = buy(account)
    hold_reserve(account=account, amount_micros=1_000_000, request_id="run_in_flight")

    purchase_refund(purchase=purchase, refunded_micros=TEN_DOLLARS, reason="Card refund")
    hold_capture(
        request_id="run_in_flight",
        amount_micros=1_000_000,
        provider_account=provider_account(),
        description="the call in flight",
    )

    account.refresh_from_db()
    assert (balance(account), account.held_micros) == (-1_000_000, 0)
    call_command("check_ledger")


def test_refund_totals_reported_twice_or_late_take_back_only_the_difference(alice):
    account = account_for_user(user=alice.user)
    purchase = buy(account)

    purchase_refund(purchase=purchase, refunded_micros=3_000_000, reason="first refund")
    purchase_refund(purchase=purchase, refunded_micros=5_000_000, reason="second refund")
    replayed = purchase_refund(purchase=purchase, refunded_micros=5_000_000, reason="again")
    late = purchase_refund(purchase=purchase, refunded_micros=4_000_000, reason="late")

    assert replayed and late == []
    taken = LedgerEntry.objects.filter(account=account, type="refund")
    assert sorted(entry.amount_micros for entry in taken) == [-3_000_000, -2_000_000]
    assert balance(account) == 5_000_000
    call_command("check_ledger")


def test_a_dispute_takes_back_at_most_what_refunds_left_and_only_once(alice):
    account = account_for_user(user=alice.user)
    purchase = buy(account)
    purchase_refund(purchase=purchase, refunded_micros=4_000_000, reason="refund")

    purchase_dispute(
        purchase=purchase, dispute_ref="dp_1", disputed_micros=TEN_DOLLARS, reason="dispute"
    )
    purchase_dispute(
        purchase=purchase, dispute_ref="dp_1", disputed_micros=TEN_DOLLARS, reason="again"
    )
    more = purchase_refund(purchase=purchase, refunded_micros=TEN_DOLLARS, reason="refund all")

    purchase.refresh_from_db()
    assert (purchase.refunded_micros, purchase.disputed_micros) == (4_000_000, 6_000_000)
    assert more == []
    assert balance(account) == 0
    call_command("check_ledger")


def test_an_adjustment_still_cannot_take_more_than_is_available(alice):
    account = account_for_user(user=alice.user)
    buy(account)
    hold_reserve(account=account, amount_micros=4_000_000, request_id="run_held")

    with pytest.raises(Conflict, match="does not cover"):
        credits_adjust(account=account, amount_micros=-6_000_001, reason="too much")
    credits_adjust(account=account, amount_micros=-6_000_000, reason="all that is free")

    assert balance(account) == 4_000_000


def test_the_platform_account_cannot_buy(db):
    with pytest.raises(InvalidRequest):
        buy(account_platform())


@pytest.mark.parametrize(
    ("amount", "allowed"),
    [
        (4_990_000, False),
        (5_000_000, True),
        (12_340_000, True),
        (12_345_000, False),  # half a cent
        (1_000_000_000, True),
        (1_000_010_000, False),
    ],
)
def test_a_purchase_is_5_to_1000_dollars_in_whole_cents(amount, allowed):
    if allowed:
        purchase_amount_validate(amount_micros=amount)
    else:
        with pytest.raises(InvalidRequest):
            purchase_amount_validate(amount_micros=amount)


def test_operators_read_purchases_in_the_admin_and_cannot_change_them(alice, client):
    purchase = buy(account_for_user(user=alice.user))
    client.force_login(User.objects.create_superuser(email="ops@example.com", password="x"))

    listing = client.get("/admin/credits/purchase/")

    assert listing.status_code == 200
    assert "cs_test_1" in listing.content.decode() and "$10.00" in listing.content.decode()
    assert client.get(f"/admin/credits/purchase/{purchase.pk}/delete/").status_code == 403
    assert client.get("/admin/credits/purchase/add/").status_code == 403
