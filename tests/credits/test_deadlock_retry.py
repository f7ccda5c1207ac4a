"""A settlement transaction that PostgreSQL ends to break a deadlock is run again."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import OperationalError, connections, transaction
from django.db.models import F
from django.utils import timezone

from credits.models import Account, Hold
from credits.services.holds import hold_release, hold_reserve
from tests.factories import fund, make_persona
from tests.threads import side_by_side

PRICE = 10_000


def _lock_waiters() -> int:
    with connections["default"].cursor() as cursor:
        # Inside a transaction the statistics views keep their first reading unless cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


def _wait_for_a_lock_waiter() -> None:
    deadline = time.monotonic() + 10
    while _lock_waiters() < 1:
        assert time.monotonic() < deadline, "no transaction is waiting on a lock"
        time.sleep(0.01)


def _leave_the_deadlock_check_to_the_other_session() -> None:
    """PostgreSQL looks for a deadlock in a session that has waited ``deadlock_timeout`` and
    ends that session's transaction. Both sessions wait about as long, so on a busy machine
    either could look first; this one waits far longer, which leaves it to the service's."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SET LOCAL deadlock_timeout = '20s'")


@pytest.mark.django_db(transaction=True)
def test_a_reservation_ended_by_a_deadlock_is_run_again(settings):
    settings.CREDITS_ONE_STATEMENT_SETTLEMENT = False
    account = fund(make_persona("deadlock@example.com").user, PRICE)
    overdue = hold_reserve(account=account, amount_micros=PRICE, request_id="run_crashed")
    Hold.objects.filter(pk=overdue.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    hold_locked, outcome = threading.Event(), {}

    def lock_the_hold_then_the_account():
        # The reverse of the services' order (account, then holds): the reservation below,
        # which sweeps the overdue hold with the account locked, waits for this transaction,
        # which then waits for it. PostgreSQL ends the reservation's, which is run again.
        try:
            with transaction.atomic():
                _leave_the_deadlock_check_to_the_other_session()
                Hold.objects.select_for_update().get(pk=overdue.pk)
                hold_locked.set()
                _wait_for_a_lock_waiter()
                Account.objects.filter(pk=account.pk).update(held_micros=F("held_micros"))
            outcome["other"] = "committed"
        except OperationalError:
            outcome["other"] = "ended"

    def reserve():
        assert hold_locked.wait(10)
        return hold_reserve(account=account, amount_micros=PRICE, request_id="run_next")

    hold = side_by_side(lock_the_hold_then_the_account, reserve)

    assert outcome["other"] == "committed"
    assert hold.status == Hold.Status.PENDING and hold.pk is not None
    overdue.refresh_from_db()
    assert overdue.status == Hold.Status.EXPIRED
    account.refresh_from_db()
    assert (account.balance_micros, account.held_micros) == (PRICE, PRICE)


@pytest.mark.django_db(transaction=True)
def test_a_release_ended_by_a_deadlock_is_run_again():
    account = fund(make_persona("deadlock@example.com").user, PRICE)
    hold = hold_reserve(account=account, amount_micros=PRICE, request_id="run_failed")
    hold_locked, outcome = threading.Event(), {}

    def lock_the_hold_then_the_account():
        # The reverse of the release's order (account, then the hold): PostgreSQL ends the
        # release's transaction, which is then run again.
        try:
            with transaction.atomic():
                _leave_the_deadlock_check_to_the_other_session()
                Hold.objects.select_for_update().get(pk=hold.pk)
                hold_locked.set()
                _wait_for_a_lock_waiter()
                Account.objects.filter(pk=account.pk).update(held_micros=F("held_micros"))
            outcome["other"] = "committed"
        except OperationalError:
            outcome["other"] = "ended"

    def release():
        assert hold_locked.wait(10)
        return hold_release(hold=hold)

    released = side_by_side(lock_the_hold_then_the_account, release)

    assert outcome["other"] == "committed"
    assert released.status == Hold.Status.RELEASED
    account.refresh_from_db()
    assert (account.balance_micros, account.held_micros) == (PRICE, 0)
