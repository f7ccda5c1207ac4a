"""POST /v1/run: the paid-call pipeline paid from prepaid credits, once per Idempotency-Key.

A retry with the same Idempotency-Key and request replays the first answer instead of running
again. The answer is the run envelope: the provider's data, the price, and whether (and under
which request) the call was charged.
"""

import secrets
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace

from django.conf import settings

from calls.idempotency import (
    Replay,
    idempotency_abandon,
    idempotency_begin,
    idempotency_complete,
    request_fingerprint,
)
from calls.pipeline import (
    CallInput,
    CallResult,
    CallStream,
    StreamEnd,
    call_execute,
    call_lapse_seconds,
    call_stream,
)
from calls.prepaid import PrepaidCredits
from calls.streams import is_stream_request
from gateway.errors import InvalidRequest, UpstreamError
from gateway.inflight import InFlightSlot, in_flight_slot, released_at_end
from gateway.money import micros_to_cents
from gateway.selectors import KeyPrincipal


def new_request_id() -> str:
    return f"run_{int(time.time() * 1000)}_{secrets.token_hex(6)}"


@dataclass(frozen=True)
class RunInput(CallInput):
    parent_request_id: str | None = None


@dataclass(frozen=True)
class RunResult:
    status: int
    body: dict
    request_id: str
    upstream_ms: float = 0.0
    replayed: bool = False  # the stored answer of an earlier request with the same key
    stream: CallStream | None = None  # a streamed answer: relayed instead of ``body``


def run_execute(
    *,
    principal: KeyPrincipal,
    run: RunInput,
    request_id: str,
    idempotency_key: str | None = None,
) -> RunResult:
    """Run the call once, or replay the answer an earlier use of ``idempotency_key`` got.

    Refusals raise ApiError and leave the key free for a retry; a provider's failure raises
    UpstreamError and is the key's final answer, like a success.
    """
    if is_stream_request(run.body):
        if idempotency_key is not None:
            raise InvalidRequest(
                "A streamed answer cannot be replayed: send Idempotency-Key without stream, or "
                "stream without Idempotency-Key"
            )
        slot = _in_flight_slot(principal, streaming=True)
        try:
            result = _run_stream(principal, run, request_id)
        except BaseException:
            slot.release()
            raise
        if result.stream is None:
            slot.release()
            return result
        # The stream holds the slot until its last event is relayed or the caller goes away.
        events = released_at_end(result.stream.events, slot)
        return replace(result, stream=replace(result.stream, events=events))
    if idempotency_key is None:
        with _in_flight(principal):
            return _run(principal, run, request_id)
    claim = idempotency_begin(
        api_key_id=principal.key_id,
        key=idempotency_key,
        fingerprint=run_fingerprint(run),
    )
    if isinstance(claim, Replay):
        return RunResult(
            status=claim.status,
            body=claim.body,
            request_id=claim.body.get("requestId", ""),
            replayed=True,
        )
    try:
        with _in_flight(principal):
            result = _run(principal, run, request_id)
    except UpstreamError as error:
        # The provider was called: the outcome is final for this key.
        idempotency_complete(record=claim, status=error.status_code, body=error.body())
        raise
    except BaseException:
        idempotency_abandon(record=claim)
        raise
    idempotency_complete(record=claim, status=result.status, body=result.body)
    return result


def _in_flight_slot(principal: KeyPrincipal, *, streaming: bool) -> InFlightSlot:
    """A slot of the key's calls in flight (gateway.inflight), or RATE_LIMITED."""
    return in_flight_slot(
        subject=f"key:{principal.key_id}",
        limit=settings.CALLS_IN_FLIGHT_PER_KEY,
        lapse_seconds=call_lapse_seconds(streaming=streaming),
        holder="This key",
    )


@contextmanager
def _in_flight(principal: KeyPrincipal):
    slot = _in_flight_slot(principal, streaming=False)
    try:
        yield
    finally:
        slot.release()


def run_fingerprint(run: RunInput) -> str:
    """What a retry under the same Idempotency-Key must repeat: the request as validated, so a
    field sent as null and one left out are the same request."""
    return request_fingerprint(asdict(run))


def _run(principal: KeyPrincipal, run: RunInput, request_id: str) -> RunResult:
    payment = PrepaidCredits(principal=principal, parent_request_id=run.parent_request_id)
    result = call_execute(
        request=run, payment=payment, request_id=request_id, test_mode=principal.is_test
    )
    return RunResult(
        status=200,
        body=_envelope(result, payment),
        request_id=request_id,
        upstream_ms=result.upstream_ms,
    )


def _run_stream(principal: KeyPrincipal, run: RunInput, request_id: str) -> RunResult:
    payment = PrepaidCredits(principal=principal, parent_request_id=run.parent_request_id)

    def trailer(end: StreamEnd) -> dict:
        return {
            "requestId": request_id,
            "priceCents": micros_to_cents(end.price_micros),
            "charged": payment.charged_micros > 0,
            "ending": end.ending,
        }

    answer = call_stream(
        request=run,
        payment=payment,
        request_id=request_id,
        trailer=trailer,
        test_mode=principal.is_test,
    )
    if isinstance(answer, CallResult):  # the provider answered whole, not as a stream
        return RunResult(
            status=200,
            body=_envelope(answer, payment),
            request_id=request_id,
            upstream_ms=answer.upstream_ms,
        )
    return RunResult(
        status=200,
        body={},
        request_id=request_id,
        upstream_ms=answer.headers_ms,
        stream=answer,
    )


def _envelope(result: CallResult, payment: PrepaidCredits) -> dict:
    if payment.continues:
        # A continuation page shows the price of the request it continues, which paid for it.
        price_micros = result.quote_micros
        billing = {
            "requestId": result.request_id,
            "parentRequestId": payment.continues,
            "charged": False,
        }
    else:
        price_micros = result.price_micros
        billing = {"requestId": result.request_id, "charged": payment.charged_micros > 0}
    return {
        "success": True,
        "priceCents": micros_to_cents(price_micros),
        "data": result.data,
        "requestId": result.request_id,
        "billing": billing,
    }
