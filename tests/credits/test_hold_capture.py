import pytest
from django.core.management import call_command

from credits.models import Hold, LedgerEntry
from credits.services.holds import hold_capture, hold_release, hold_reserve
from gateway.errors import Conflict, InvalidRequest
from tests.factories import fund, provider_account

pytestmark = pytest.mark.usefixtures("both_settlements")


@pytest.fixture
def funded(alice):
    return fund(alice.user, 1_000_000)


def reserve(account, amount, request_id="run_cap"):
    return hold_reserve(
        account=account,
        amount_micros=amount,
        request_id=request_id,
        metadata={"api": "hunter", "path": "/v2/domain-search"},
    )


def test_capturing_less_than_held_returns_the_remainder(funded):
    provider = provider_account()
    reserve(funded, 250_000)

    hold_capture(
        request_id="run_cap",
        amount_micros=100_000,
        provider_account=provider,
        description="hunter /v2/domain-search",
    )

    funded.refresh_from_db()
    assert funded.balance_micros == 900_000
    assert funded.held_micros == 0
    assert Hold.objects.get(request_id="run_cap").captured_micros == 100_000


def test_a_charge_is_split_between_provider_and_platform_and_sums_to_zero(funded, settings):
    settings.PLATFORM_FEE_BPS = 1000
    provider = provider_account()
    reserve(funded, 100_000)

    hold_capture(
        request_id="run_cap", amount_micros=100_000, provider_account=provider, description="call"
    )

    legs = {e.type: e for e in LedgerEntry.objects.filter(event_ref="call:run_cap")}
    assert legs["api_call"].amount_micros == -100_000
    assert legs["revenue"].amount_micros == 90_000
    assert legs["fee"].amount_micros == 10_000
    assert legs["api_call"].metadata == {
        "api": "hunter",
        "path": "/v2/domain-search",
        "requestId": "run_cap",
    }
    provider.refresh_from_db()
    assert provider.balance_micros == 90_000
    assert legs["api_call"].balance_after_micros == 900_000
    # The revenue and the fee are receipts: booked without locking their accounts, so no
    # balance after them is known.
    assert (legs["revenue"].balance_after_micros, legs["revenue"].rolled_up) == (None, False)
    assert (legs["fee"].balance_after_micros, legs["fee"].rolled_up) == (None, False)


def test_without_a_provider_the_platform_keeps_the_whole_charge(funded):
    reserve(funded, 5_000)
    hold_capture(
        request_id="run_cap", amount_micros=5_000, provider_account=None, description="call"
    )
    types = set(LedgerEntry.objects.filter(event_ref="call:run_cap").values_list("type", flat=True))
    assert types == {"api_call", "fee"}


def test_capturing_twice_charges_once(funded):
    reserve(funded, 50_000)
    for _ in range(2):
        hold_capture(
            request_id="run_cap", amount_micros=50_000, provider_account=None, description="call"
        )
    funded.refresh_from_db()
    assert funded.balance_micros == 950_000
    assert LedgerEntry.objects.filter(event_ref="call:run_cap").count() == 2
    call_command("check_ledger")


def test_releasing_twice_changes_nothing_and_a_released_hold_cannot_be_captured(funded):
    reserve(funded, 50_000)
    hold_release(request_id="run_cap")
    hold_release(request_id="run_cap")
    funded.refresh_from_db()
    assert (funded.balance_micros, funded.held_micros) == (1_000_000, 0)
    with pytest.raises(Conflict):
        hold_capture(
            request_id="run_cap", amount_micros=1, provider_account=None, description="call"
        )
    assert not LedgerEntry.objects.filter(event_ref="call:run_cap").exists()


def test_a_captured_hold_cannot_be_released(funded):
    reserve(funded, 50_000)
    hold_capture(
        request_id="run_cap", amount_micros=10_000, provider_account=None, description="call"
    )
    with pytest.raises(Conflict):
        hold_release(request_id="run_cap")
    funded.refresh_from_db()
    assert funded.balance_micros == 990_000


def test_capturing_more_than_held_is_refused(funded):
    reserve(funded, 50_000)
    with pytest.raises(InvalidRequest):
        hold_capture(
            request_id="run_cap", amount_micros=50_001, provider_account=None, description="call"
        )
    funded.refresh_from_db()
    assert funded.held_micros == 50_000
