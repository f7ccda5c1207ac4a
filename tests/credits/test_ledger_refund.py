import pytest
from django.core.management import call_command

from credits.models import LedgerEntry
from credits.services.holds import hold_capture, hold_reserve
from credits.services.ledger import credits_adjust, ledger_refund
from gateway.errors import Conflict, InvalidRequest
from tests.factories import fund, provider_account

pytestmark = pytest.mark.usefixtures("both_settlements")


@pytest.fixture
def charged_call(alice):
    account = fund(alice.user, 100_000)
    provider = provider_account()
    hold_reserve(account=account, amount_micros=40_000, request_id="run_refund")
    hold_capture(
        request_id="run_refund", amount_micros=40_000, provider_account=provider, description="call"
    )
    entry = LedgerEntry.objects.get(event_ref="call:run_refund", type="api_call")
    return account, provider, entry


def test_a_refund_restores_the_caller_and_reverses_provider_revenue(charged_call):
    account, provider, entry = charged_call
    ledger_refund(entry=entry, reason="provider returned garbage")
    account.refresh_from_db()
    provider.refresh_from_db()
    assert account.balance_micros == 100_000
    assert provider.balance_micros == 0
    refunds = LedgerEntry.objects.filter(event_ref="refund:call:run_refund")
    assert sorted(e.amount_micros for e in refunds) == [-36_000, -4_000, 40_000]
    assert all(e.type == "refund" for e in refunds)
    call_command("check_ledger")


def test_refunding_twice_is_refused(charged_call):
    account, _, entry = charged_call
    ledger_refund(entry=entry, reason="once")
    with pytest.raises(Conflict, match="already refunded"):
        ledger_refund(entry=entry, reason="twice")
    account.refresh_from_db()
    assert account.balance_micros == 100_000


def test_only_api_calls_can_be_refunded(alice):
    fund(alice.user, 10_000)
    grant = LedgerEntry.objects.get(account__user=alice.user)
    with pytest.raises(InvalidRequest):
        ledger_refund(entry=grant, reason="no")


def test_a_refund_the_provider_can_no_longer_cover_is_refused(charged_call):
    account, provider, entry = charged_call
    credits_adjust(account=provider, amount_micros=-36_000, reason="payout to the provider")

    with pytest.raises(Conflict, match="no longer covers"):
        ledger_refund(entry=entry, reason="late")
    account.refresh_from_db()
    assert account.balance_micros == 60_000
    call_command("check_ledger")


def test_an_adjustment_cannot_take_more_than_is_available(alice):
    account = fund(alice.user, 10_000)
    with pytest.raises(Conflict, match="does not cover"):
        credits_adjust(account=account, amount_micros=-10_001, reason="too much")
    account.refresh_from_db()
    assert account.balance_micros == 10_000
