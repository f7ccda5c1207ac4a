"""Paying for one call on the x402 or np rail: the rails' side of calls.payment.Payment (the
mpp rail's is rails.mpp.payment).

authorize: no payment -> 402 with the offers; a payment -> verified by the facilitator, then its
identity (protocol, network, payer, nonce) claimed by a unique row before the provider is called.
settle: a provider failure releases the claim (the same signed payment may be retried); a served
call settles (x402: the facilitator's settle; np: the payment waits for its batch). A settlement
refused withholds the answer (402); a settlement that does not answer in time is recorded as
pending, and the answer is served: the claimed authorization is settled by ``rails_reconcile``,
so the payer is never asked to pay twice.
"""

import time
from dataclasses import dataclass

from x402.http.utils import encode_payment_required_header, encode_payment_response_header
from x402.schemas import SettleResponse
from x402.schemas.v1 import PaymentPayloadV1, PaymentRequiredV1

from calls.payment import Call, CallRecord, Outcome
from gateway.errors import ApiError, NotFound
from gateway.money import micros_to_cents
from rails import offers
from rails.models import RailPayment
from rails.offers import NP, X402
from rails.services import (
    payment_batch_wait,
    payment_claim,
    payment_failed,
    payment_pending,
    payment_release,
    payment_settle_record,
)
from rails.x402 import (
    FacilitatorUnavailable,
    PaymentUnreadable,
    payment_authorization,
    payment_decode,
    payment_settle,
    payment_verify,
    requirements_matching,
)

PAYMENT_SIGNATURE = "PAYMENT-SIGNATURE"  # x402 v2
X_PAYMENT = "X-PAYMENT"  # x402 v1
PAYMENT_REQUIRED = "PAYMENT-REQUIRED"
PAYMENT_RESPONSE = "PAYMENT-RESPONSE"
X_PAYMENT_RESPONSE = "X-PAYMENT-RESPONSE"


class PaymentRequired(ApiError):
    status_code = 402
    code = "PAYMENT_REQUIRED"
    default_message = "Payment required"


class PaymentUnavailable(ApiError):
    status_code = 503
    code = "PAYMENT_UNAVAILABLE"
    default_message = "Payments cannot be verified right now; nothing was charged"


@dataclass(frozen=True)
class Resource:
    """The rail address a request was made to, as its challenge names it."""

    protocol: str
    url: str
    slug: str
    path: str


class RailCallPayment:
    """One request on the x402 or np rail. ``header`` is the payment it carries, if any."""

    settles_before_delivery = True

    def __init__(self, *, resource: Resource, header: str | None, header_name: str | None):
        self.resource = resource
        self.header = header
        self.header_name = header_name
        self.claim: RailPayment | None = None
        self.response_headers: dict[str, str] = {}
        self._payload = None
        self._requirements = None

    # -- authorize ---------------------------------------------------------------------------

    def authorize(self, *, call: Call, quote_micros: int) -> None:
        endpoint = call.endpoint
        if not endpoint.is_payable:
            raise NotFound(
                f"{endpoint.method} {endpoint.path} of {endpoint.api.slug} is not payable on the "
                "rails; call it through POST /v1/run with a gateway key"
            )
        if quote_micros == 0:
            return  # free: served without payment
        if self.header is None:
            raise self._challenge(call, quote_micros, "Payment required")
        try:
            payload = payment_decode(self.header)
            authorization = payment_authorization(payload)
        except PaymentUnreadable as error:
            raise self._challenge(call, quote_micros, str(error)) from None
        if self.resource.protocol == NP and isinstance(payload, PaymentPayloadV1):
            raise self._challenge(call, quote_micros, "The np rail takes x402 version 2 payments")
        offered = self._offered(call, quote_micros)
        try:
            requirements = requirements_matching(
                protocol=self.resource.protocol, payload=payload, offered=offered
            )
        except ValueError:
            requirements = None
        if requirements is None:
            raise self._challenge(call, quote_micros, "No matching payment requirements")

        started = time.monotonic()
        try:
            verdict = payment_verify(
                protocol=self.resource.protocol, payload=payload, requirements=requirements
            )
        except FacilitatorUnavailable as error:
            raise PaymentUnavailable(
                f"The payment could not be verified: {error}. Nothing was charged; retry later"
            ) from None
        verify_ms = int((time.monotonic() - started) * 1000)
        if not verdict.is_valid:
            raise self._challenge(
                call, quote_micros, verdict.invalid_reason or "The payment is not valid"
            )

        claim = payment_claim(
            protocol=self.resource.protocol,
            x402_version=payload.x402_version,
            network=str(requirements.network),
            payer=(verdict.payer or authorization.payer).lower(),
            nonce=authorization.nonce,
            pay_to=authorization.pay_to,
            amount_micros=quote_micros,
            endpoint=endpoint,
            request_id=call.request_id,
            payload=payload.model_dump(by_alias=True, exclude_none=True),
            requirements=requirements.model_dump(by_alias=True, exclude_none=True),
            verify_ms=verify_ms,
        )
        if claim is None:
            raise self._challenge(
                call, quote_micros, "This payment was already used; sign a new one"
            )
        self.claim, self._payload, self._requirements = claim, payload, requirements

    # -- settle ------------------------------------------------------------------------------

    def settle(self, *, record: CallRecord) -> None:
        claim = self.claim
        if claim is None:
            return  # free, or refused before a payment was claimed: nothing to record
        if record.outcome != Outcome.COMPLETED:
            payment_release(
                payment=claim,
                upstream_ms=record.latency_ms,
                reason="The provider failed; the payment was not settled and may be retried",
            )
            return
        if self.resource.protocol == NP:
            payment_batch_wait(payment=claim, upstream_ms=record.latency_ms)
            self._receipt(
                SettleResponse(
                    success=True,
                    payer=claim.payer,
                    transaction="",
                    network=claim.network,
                    amount=str(claim.amount_micros),
                    extensions={"settlement": offers.NP_SETTLEMENT, "status": "batched"},
                )
            )
            return
        self._settle_now(claim, record)

    def _settle_now(self, claim: RailPayment, record: CallRecord) -> None:
        started = time.monotonic()
        try:
            result = payment_settle(
                protocol=X402, payload=self._payload, requirements=self._requirements
            )
        except FacilitatorUnavailable as error:
            settle_ms = int((time.monotonic() - started) * 1000)
            if not error.timeout:
                payment_failed(
                    payment=claim,
                    reason=str(error),
                    upstream_ms=record.latency_ms,
                    settle_ms=settle_ms,
                )
                raise PaymentUnavailable(
                    "The payment could not be settled, so the answer is withheld; nothing was "
                    "charged"
                ) from None
            payment_pending(
                payment=claim, upstream_ms=record.latency_ms, settle_ms=settle_ms, reason=str(error)
            )
            self.response_headers["Payment-Settlement"] = "pending"
            return
        settle_ms = int((time.monotonic() - started) * 1000)
        if not result.success:
            reason = result.error_reason or "settlement_failed"
            payment_failed(
                payment=claim, reason=reason, upstream_ms=record.latency_ms, settle_ms=settle_ms
            )
            error = self._challenge(
                record.call, claim.amount_micros, f"The payment could not be settled: {reason}"
            )
            error.headers[self._response_header()] = encode_payment_response_header(result)
            raise error
        payment_settle_record(
            payment=claim,
            transaction_ref=result.transaction,
            upstream_ms=record.latency_ms,
            settle_ms=settle_ms,
        )
        self._receipt(result)

    def _receipt(self, result: SettleResponse) -> None:
        self.response_headers[self._response_header()] = encode_payment_response_header(result)

    def _response_header(self) -> str:
        return X_PAYMENT_RESPONSE if self.header_name == X_PAYMENT else PAYMENT_RESPONSE

    # -- the challenge -----------------------------------------------------------------------

    def _offered(self, call: Call, quote_micros: int) -> list:
        protocol = self.resource.protocol
        requirements = list(
            offers.payment_requirements(protocol=protocol, amount_micros=quote_micros)
        )
        if protocol == X402:
            requirements += self._v1_requirements(call, quote_micros)
        return requirements

    def _v1_requirements(self, call: Call, quote_micros: int) -> list:
        return offers.payment_requirements_v1(
            amount_micros=quote_micros,
            resource_url=self.resource.url,
            description=_description(call),
            mime_type="application/json",
        )

    def _challenge(self, call: Call, quote_micros: int, error: str) -> PaymentRequired:
        """402: the contract's offers in the body, x402 v2's PAYMENT-REQUIRED header, and on the
        x402 rail the v1 fields (x402Version, accepts) in the same body for v1 clients."""
        protocol = self.resource.protocol
        extra = {
            "priceCents": micros_to_cents(quote_micros),
            "offers": offers.payment_offers(
                slug=self.resource.slug, path=self.resource.path, amount_micros=quote_micros
            ),
        }
        if protocol == X402:
            v1 = PaymentRequiredV1(error=error, accepts=self._v1_requirements(call, quote_micros))
            extra.update(v1.model_dump(by_alias=True, exclude_none=True, exclude={"error"}))
        headers = {"Cache-Control": "no-store"}
        if protocol in (X402, NP):
            required = offers.payment_required(
                protocol=protocol,
                amount_micros=quote_micros,
                resource_url=self.resource.url,
                description=_description(call),
                mime_type="application/json",
                error=error,
            )
            headers[PAYMENT_REQUIRED] = encode_payment_required_header(required)
        return PaymentRequired(error, extra=extra, headers=headers)


def _description(call: Call) -> str:
    endpoint = call.endpoint
    return (endpoint.summary or endpoint.description or call.description)[:300]
