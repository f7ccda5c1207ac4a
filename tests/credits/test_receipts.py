"""Receipts: a charge locks only its caller's account; the provider's revenue and the platform's
fee are appended without touching their accounts' rows, read exactly at once, and folded into
the rolled-up balances by roll_up_receipts."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connections, transaction

from credits.models import Account, LedgerEntry
from credits.services.accounts import account_for_organization, account_platform
from credits.services.holds import hold_capture, hold_reserve
from credits.services.ledger import Leg, credits_grant, ledger_receipts_book
from gateway.errors import InvalidRequest
from tests.factories import fund, make_persona, provider_account
from tests.threads import side_by_side

PRICE = 50_000


def _charge(account, provider, request_id, amount=PRICE):
    hold = hold_reserve(account=account, amount_micros=amount, request_id=request_id)
    return hold_capture(
        hold=hold, amount_micros=amount, provider_account=provider, description="leads"
    )


def _fresh(account) -> Account:
    return Account.objects.get(pk=account.pk)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("both_settlements")
def test_a_charge_completes_while_the_provider_and_platform_rows_are_locked():
    caller = fund(make_persona("caller@example.com").user, 10 * PRICE)
    provider = provider_account()
    platform = account_platform()
    locked, charged = threading.Event(), threading.Event()
    outcome = {}

    def hold_the_receiving_rows():
        # As the roll-up and every writer of a balance lock them.
        with transaction.atomic():
            receiving = Account.objects.select_for_update(no_key=True)
            list(receiving.filter(pk__in=[provider.pk, platform.pk]))
            locked.set()
            outcome["charged while locked"] = charged.wait(10)

    def charge():
        assert locked.wait(10)
        hold = _charge(caller, provider, "run_while_locked")
        charged.set()
        return hold

    hold = side_by_side(hold_the_receiving_rows, charge)

    assert outcome["charged while locked"] is True
    assert hold.status == "captured"
    assert _fresh(provider).balance_micros == PRICE * 9 // 10
    call_command("check_ledger")


@pytest.mark.usefixtures("both_settlements")
def test_balances_read_the_same_before_and_after_the_roll_up(alice, client_for):
    caller = fund(make_persona("caller@example.com").user, 10 * PRICE)
    provider = account_for_organization(organization=alice.organization)
    platform = account_platform()
    for number in range(3):
        _charge(caller, provider, f"run_{number}")
    before = {
        "caller": _fresh(caller).balance_micros,
        "provider": _fresh(provider).balance_micros,
        "platform": _fresh(platform).balance_micros,
    }
    api_before = client_for(alice.org_key).get("/v1/credits/balance").json()["balance"]

    call_command("roll_up_receipts", verbosity=0)

    assert before == {
        "caller": 10 * PRICE - 3 * PRICE,
        "provider": 3 * (PRICE * 9 // 10),
        "platform": -10 * PRICE + 3 * (PRICE // 10),
    }
    assert _fresh(provider).rolled_up_micros == before["provider"]
    assert _fresh(platform).rolled_up_micros == before["platform"]
    assert not LedgerEntry.objects.filter(rolled_up=False).exists()
    assert client_for(alice.org_key).get("/v1/credits/balance").json()["balance"] == api_before
    assert api_before == "$0.135"
    call_command("check_ledger")


def test_the_roll_up_says_how_many_receipts_it_folded_and_is_idempotent(alice, capsys):
    caller = fund(make_persona("caller@example.com").user, 10 * PRICE)
    provider = account_for_organization(organization=alice.organization)
    for number in range(3):
        _charge(caller, provider, f"run_{number}")
    capsys.readouterr()

    call_command("roll_up_receipts", "--batch-size", "2")
    call_command("roll_up_receipts")

    # The platform took the grant's debit and three fees; the provider three revenues.
    assert capsys.readouterr().out.splitlines() == [
        "Rolled up 7 receipts into 2 accounts",
        "Rolled up 0 receipts into 0 accounts",
    ]


def test_an_organization_spends_revenue_that_waits_for_the_roll_up(alice, client_for):
    caller = fund(make_persona("caller@example.com").user, 10 * PRICE)
    organization = account_for_organization(organization=alice.organization)
    _charge(caller, organization, "run_earned", amount=10 * PRICE)
    earned = 10 * PRICE * 9 // 10
    assert _fresh(organization).rolled_up_micros == 0

    spent = _charge(organization, None, "run_spent", amount=earned)

    assert spent.status == "captured"
    assert _fresh(organization).balance_micros == 0
    charge = LedgerEntry.objects.get(event_ref="call:run_spent", type="api_call")
    assert charge.balance_after_micros == 0
    call_command("check_ledger")


@pytest.mark.usefixtures("both_settlements")
def test_a_charge_rolls_up_the_callers_own_receipts_so_its_balance_after_is_whole(alice):
    caller = fund(make_persona("caller@example.com").user, 10 * PRICE)
    organization = account_for_organization(organization=alice.organization)
    credits_grant(account=organization, amount_micros=PRICE, reason="seed")
    for number in range(2):
        _charge(caller, organization, f"run_earned_{number}", amount=2 * PRICE)
    assert _fresh(organization).rolled_up_micros == PRICE  # the revenue waits

    _charge(organization, None, "run_spent", amount=PRICE)

    whole = PRICE + 2 * (2 * PRICE * 9 // 10) - PRICE
    charge = LedgerEntry.objects.get(event_ref="call:run_spent", type="api_call")
    assert charge.balance_after_micros == whole
    assert _fresh(organization).rolled_up_micros == whole
    assert not LedgerEntry.objects.filter(account=organization, rolled_up=False).exists()


def test_receipts_book_appends_an_event_once_without_a_balance_after(alice):
    provider = account_for_organization(organization=alice.organization)
    platform = account_platform()
    receipts = [
        Leg(platform.pk, "revenue", -1_000, "platform"),
        Leg(provider.pk, "revenue", 900, "provider"),
        Leg(platform.pk, "fee", 100, "fee"),
    ]

    first = ledger_receipts_book(receipts=receipts, event_ref="rail:x1", description="rail")
    again = ledger_receipts_book(receipts=receipts, event_ref="rail:x1", description="rail")

    assert sorted(entry.pk for entry in again) == sorted(entry.pk for entry in first)
    assert LedgerEntry.objects.filter(event_ref="rail:x1").count() == 3
    assert all(entry.balance_after_micros is None and not entry.rolled_up for entry in first)
    assert _fresh(provider).balance_micros == 900
    assert _fresh(provider).rolled_up_micros == 0
    call_command("check_ledger")


@pytest.mark.parametrize(
    ("amounts", "message"),
    [
        ((-1_000, 900), "sum to zero"),
        ((1_000, -1_000), "Only the platform"),
    ],
)
def test_receipts_book_refuses_an_unbalanced_event_or_a_debit_of_a_payee(alice, amounts, message):
    provider = account_for_organization(organization=alice.organization)
    platform = account_platform()
    platform_amount, provider_amount = amounts
    with pytest.raises(InvalidRequest, match=message):
        ledger_receipts_book(
            receipts=[
                Leg(platform.pk, "revenue", platform_amount, "platform"),
                Leg(provider.pk, "revenue", provider_amount, "provider"),
            ],
            event_ref="rail:bad",
            description="rail",
        )
    assert not LedgerEntry.objects.filter(event_ref="rail:bad").exists()


@pytest.mark.django_db(transaction=True)
def test_the_roll_up_beside_charges_in_flight_folds_every_receipt_exactly_once(settings):
    settings.CREDITS_ONE_STATEMENT_SETTLEMENT = True
    callers = [fund(make_persona(f"c{n}@example.com").user, 40 * PRICE) for n in range(4)]
    provider = provider_account()
    charges_done = threading.Event()

    def charge_many(caller, number):
        try:
            for call in range(20):
                _charge(caller, provider, f"run_{number}_{call}", amount=PRICE)
        finally:
            connections.close_all()

    def roll_up_until_done():
        try:
            while not charges_done.is_set():
                call_command("roll_up_receipts", verbosity=0)
            call_command("roll_up_receipts", verbosity=0)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=5) as pool:
        rolling = pool.submit(roll_up_until_done)
        charging = [pool.submit(charge_many, c, n) for n, c in enumerate(callers)]
        for future in charging:
            future.result(timeout=120)
        charges_done.set()
        rolling.result(timeout=120)

    assert not LedgerEntry.objects.filter(rolled_up=False).exists()
    assert _fresh(provider).rolled_up_micros == 4 * 20 * (PRICE * 9 // 10)
    call_command("check_ledger")
