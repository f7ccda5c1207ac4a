import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command
from django.db import connections

from credits.models import Account, Hold
from credits.services.holds import hold_reserve
from gateway.errors import InsufficientCredits
from tests.factories import fund, make_persona

pytestmark = pytest.mark.usefixtures("both_settlements")

PRICE = 10_000  # one cent


def test_a_hold_reduces_the_available_balance_not_the_balance(alice):
    account = fund(alice.user, 5 * PRICE)
    hold_reserve(account=account, amount_micros=2 * PRICE, request_id="run_1")
    account.refresh_from_db()
    assert (account.balance_micros, account.held_micros, account.available_micros) == (
        5 * PRICE,
        2 * PRICE,
        3 * PRICE,
    )


def test_it_refuses_an_overdraft_with_the_price_and_what_is_available(alice):
    account = fund(alice.user, 15_000)
    with pytest.raises(InsufficientCredits) as refused:
        hold_reserve(account=account, amount_micros=25_000, request_id="run_2")
    assert refused.value.status_code == 402
    assert refused.value.message == (
        "Insufficient credits: this call costs $0.025 and $0.015 is available"
    )
    assert refused.value.body()["priceCents"] == 2.5
    assert not Hold.objects.exists()


def test_reserving_the_same_request_twice_returns_the_first_hold(alice):
    account = fund(alice.user, 5 * PRICE)
    first = hold_reserve(account=account, amount_micros=PRICE, request_id="run_3")
    second = hold_reserve(account=account, amount_micros=PRICE, request_id="run_3")
    account.refresh_from_db()
    assert first.pk == second.pk
    assert account.held_micros == PRICE


@pytest.mark.django_db(transaction=True)
def test_64_concurrent_reservations_on_a_balance_for_10_give_exactly_10_holds():
    persona = make_persona("racer@example.com")
    account = fund(persona.user, 10 * PRICE)
    barrier = threading.Barrier(64)

    def reserve(index):
        try:
            barrier.wait()
            hold_reserve(account=account, amount_micros=PRICE, request_id=f"run_race_{index}")
            return "held"
        except InsufficientCredits:
            return "refused"
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=64) as pool:
        outcomes = list(pool.map(reserve, range(64)))

    assert outcomes.count("held") == 10
    assert outcomes.count("refused") == 54
    account = Account.objects.get(pk=account.pk)
    assert account.held_micros == 10 * PRICE
    assert account.available_micros == 0
    assert Hold.objects.filter(account=account, status="pending").count() == 10
    call_command("check_ledger")


def _synchronous_commit() -> str:
    with connections["default"].cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_reservation_on_its_own_leaves_the_capture_durable(settings):
    """A reservation made outside a transaction commits without waiting for its WAL flush; the
    setting is its own transaction's, so the capture that follows still waits for its flush
    (and with it, the reservation's)."""
    settings.CREDITS_ONE_STATEMENT_SETTLEMENT = True
    persona = make_persona("quick@example.com")
    account = fund(persona.user, 5 * PRICE)
    hold_reserve(account=account, amount_micros=PRICE, request_id="run_quick")
    assert _synchronous_commit() == "on"
    account.refresh_from_db()
    assert account.held_micros == PRICE


def test_a_reservation_inside_a_transaction_keeps_it_durable(alice):
    """Inside a caller's transaction the setting would cover the caller's other writes too, so
    the reservation stays synchronous there."""
    account = fund(alice.user, 5 * PRICE)
    hold_reserve(account=account, amount_micros=PRICE, request_id="run_inside")
    assert _synchronous_commit() == "on"
    assert Hold.objects.get(request_id="run_inside").amount_micros == PRICE
