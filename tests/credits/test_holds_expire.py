from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from credits.models import Hold
from credits.services.holds import hold_capture, hold_reserve, holds_expire
from tests.factories import fund

pytestmark = pytest.mark.usefixtures("both_settlements")


def test_the_sweeper_releases_overdue_holds_and_their_amount_becomes_available(alice, capsys):
    account = fund(alice.user, 30_000)
    hold_reserve(account=account, amount_micros=20_000, request_id="run_old", ttl_seconds=-1)
    hold_reserve(account=account, amount_micros=5_000, request_id="run_new", ttl_seconds=600)

    call_command("release_expired_holds")

    assert "Expired 1 holds" in capsys.readouterr().out
    account.refresh_from_db()
    assert account.held_micros == 5_000
    assert account.available_micros == 25_000
    assert Hold.objects.get(request_id="run_old").status == "expired"
    assert Hold.objects.get(request_id="run_new").status == "pending"
    call_command("check_ledger")


def test_sweeping_twice_changes_nothing(alice):
    account = fund(alice.user, 30_000)
    hold_reserve(account=account, amount_micros=20_000, request_id="run_old", ttl_seconds=-1)
    assert holds_expire() == 1
    assert holds_expire() == 0
    account.refresh_from_db()
    assert account.held_micros == 0


def test_a_reservation_sweeps_the_overdue_holds_that_block_it(alice):
    account = fund(alice.user, 10_000)
    hold_reserve(account=account, amount_micros=10_000, request_id="run_crashed", ttl_seconds=-1)

    hold_reserve(account=account, amount_micros=10_000, request_id="run_next")

    assert Hold.objects.get(request_id="run_crashed").status == "expired"
    account.refresh_from_db()
    assert account.held_micros == 10_000


def test_a_pending_hold_past_its_deadline_can_still_be_captured_by_its_own_call(alice):
    account = fund(alice.user, 10_000)
    hold_reserve(account=account, amount_micros=10_000, request_id="run_slow", ttl_seconds=-1)
    hold_capture(
        request_id="run_slow", amount_micros=10_000, provider_account=None, description="slow call"
    )
    assert holds_expire(now=timezone.now() + timedelta(days=1)) == 0
    account.refresh_from_db()
    assert (account.balance_micros, account.held_micros) == (0, 0)
