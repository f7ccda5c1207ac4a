"""A settlement in progress excludes other writers of its accounts, but not a call recorded
against them: the foreign key check of a usage event's insert does not wait for it."""

import threading

import pytest
from django.db import transaction

from credits.models import UsageEvent
from credits.services.holds import hold_capture, hold_reserve
from credits.services.usage import usage_event_record
from tests.factories import fund, make_persona, provider_account
from tests.threads import side_by_side

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("both_settlements")]

PRICE = 50_000
SETTLEMENT_KEPT_OPEN_SECONDS = 10


def _record_a_rejected_call(account, request_id):
    return usage_event_record(
        account=account,
        api_key_id=None,
        request_id=request_id,
        api_slug="leads",
        path="/v1/people/enrich",
        method="POST",
        status=UsageEvent.Status.REJECTED,
        mode="live",
        cost_micros=0,
        latency_ms=3,
    )


def test_a_call_is_recorded_while_a_capture_holds_its_account():
    account = fund(make_persona("busy@example.com").user, 10 * PRICE)
    provider = provider_account()
    hold = hold_reserve(account=account, amount_micros=PRICE, request_id="run_settling")
    captured, recorded = threading.Event(), threading.Event()
    outcome = {}

    def capture_and_keep_the_transaction_open():
        with transaction.atomic():
            hold_capture(
                hold=hold, amount_micros=PRICE, provider_account=provider, description="leads"
            )
            captured.set()
            outcome["recorded while capturing"] = recorded.wait(SETTLEMENT_KEPT_OPEN_SECONDS)

    def record():
        assert captured.wait(SETTLEMENT_KEPT_OPEN_SECONDS)
        event = _record_a_rejected_call(account, "run_rejected")
        recorded.set()
        return event

    event = side_by_side(capture_and_keep_the_transaction_open, record)

    assert outcome["recorded while capturing"] is True
    assert UsageEvent.objects.get(pk=event.pk).status == UsageEvent.Status.REJECTED
    account.refresh_from_db()
    assert (account.balance_micros, account.held_micros) == (9 * PRICE, 0)
