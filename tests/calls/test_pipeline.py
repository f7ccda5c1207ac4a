"""The paid-call pipeline with a payment other than prepaid credits, as a rail will bring: it is
asked to authorize the quote before the provider is called and to settle once, with the call's
outcome and price, whatever happens."""

import pytest
import responses

from calls.payment import Call, CallRecord, Outcome
from calls.pipeline import CallInput, call_execute
from credits.models import Hold, UsageEvent
from gateway.errors import ApiError, InvalidRequest, NotFound, UpstreamError
from tests.calls.conftest import PROVIDER_URL


class NotPaid(ApiError):
    status_code = 402
    code = "PAYMENT_REQUIRED"


class VoucherPayment:
    """Pays from a voucher worth ``limit_micros``; remembers what the pipeline asked of it."""

    def __init__(self, limit_micros: int = 1_000_000):
        self.limit_micros = limit_micros
        self.steps: list[tuple[str, object]] = []

    def authorize(self, *, call: Call, quote_micros: int) -> None:
        self.steps.append(("authorize", quote_micros))
        if quote_micros > self.limit_micros:
            raise NotPaid(f"this call costs {quote_micros} micro-dollars")

    def settle(self, *, record: CallRecord) -> None:
        self.steps.append(("settle", record))


def enrich(**fields) -> CallInput:
    return CallInput(
        api="leads", path="/v1/people/enrich", body={"email": "a@b.c"}, has_body=True, **fields
    )


def settled(payment: VoucherPayment) -> CallRecord:
    (record,) = [step for name, step in payment.steps if name == "settle"]
    return record


@responses.activate
def test_a_completed_call_is_authorized_at_its_quote_then_settled_at_its_price(leads):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": {"name": "Ada"}})
    payment = VoucherPayment()

    result = call_execute(request=enrich(), payment=payment, request_id="req_1")

    assert result.data == {"person": {"name": "Ada"}}
    assert (result.quote_micros, result.price_micros) == (50_000, 50_000)
    assert [name for name, _ in payment.steps] == ["authorize", "settle"]
    record = settled(payment)
    assert (record.outcome, record.price_micros) == (Outcome.COMPLETED, 50_000)
    assert record.call.endpoint == leads.enrich
    assert record.call.description == "leads POST /v1/people/enrich"
    # Nothing of the credits ledger moved: the payment alone decides how a call is paid.
    assert not Hold.objects.exists() and not UsageEvent.objects.exists()


@responses.activate
def test_a_refused_payment_never_reaches_the_provider_and_is_settled_as_rejected(leads):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": 1})
    payment = VoucherPayment(limit_micros=10_000)

    with pytest.raises(NotPaid):
        call_execute(request=enrich(), payment=payment, request_id="req_2")

    assert len(responses.calls) == 0
    record = settled(payment)
    assert (record.outcome, record.price_micros) == (Outcome.REJECTED, 0)


@responses.activate
def test_a_failing_provider_is_settled_as_failed_and_free(leads):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", status=500, json={"error": "down"})
    payment = VoucherPayment()

    with pytest.raises(UpstreamError, match="The provider answered 500: down") as raised:
        call_execute(request=enrich(), payment=payment, request_id="req_3")

    assert raised.value.status_code == 502
    assert raised.value.extra["requestId"] == "req_3"
    record = settled(payment)
    assert (record.outcome, record.price_micros) == (Outcome.FAILED, 0)


def test_inputs_refused_before_the_payment_are_still_settled_once(leads):
    payment = VoucherPayment()

    with pytest.raises(InvalidRequest, match=r"Missing required parameters: body\.email"):
        call_execute(
            request=CallInput(api="leads", path="/v1/people/enrich", body={}, has_body=True),
            payment=payment,
            request_id="req_4",
        )

    assert [name for name, _ in payment.steps] == ["settle"]
    assert settled(payment).outcome == Outcome.REJECTED


def test_an_unknown_endpoint_involves_no_payment(leads):
    payment = VoucherPayment()

    with pytest.raises(NotFound):
        call_execute(
            request=CallInput(api="leads", path="/v9/none"), payment=payment, request_id="req_5"
        )

    assert payment.steps == []


@responses.activate
def test_a_poll_of_a_job_tells_the_payment_it_is_one(leads):
    responses.get(f"{PROVIDER_URL}/v1/jobs/42", json={"status": "done"})
    payment = VoucherPayment()

    call_execute(
        request=CallInput(api="leads", path="/v1/jobs/42"), payment=payment, request_id="r"
    )

    record = settled(payment)
    assert record.call.polled and record.call.endpoint == leads.job_poll
    assert record.outcome == Outcome.COMPLETED


@responses.activate
def test_test_mode_calls_the_apis_sandbox(leads):
    responses.post(f"{leads.sandbox_url}/v1/people/enrich", json={"sandboxed": True})

    result = call_execute(
        request=enrich(), payment=VoucherPayment(), request_id="req_6", test_mode=True
    )

    assert result.data == {"sandboxed": True}
