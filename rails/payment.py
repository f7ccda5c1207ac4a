"""Paying for one call on the x402 or np rail: the rails' side of calls.payment.Payment (the
mpp rail's is rails.mpp.payment).

authorize: no payment -> 402 with the offers; a payment -> verified by the facilitator, then its
identity (protocol, network, payer, nonce) claimed by a unique row before the provider is called.
settle: a provider failure releases the claim (the same signed payment may be retried); a served
call settles (x402: the facilitator's settle; np: the payment waits for its batch). A settlement
refused withholds the answer (402); a settlement that does not answer in time is recorded as
pending, and the answer is served: the claimed authorization is settled by ``rails_reconcile``,
so the payer is never asked to pay twice.

The verification, the claim, the settlement and the 402 live in ``X402Payment``, which a
purchase of credits in USDC (rails.purchases) pays through as well.
"""

import abc
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


class X402Payment(abc.ABC):
    """One payment on the x402 or np rail, of an amount for something: verified by the
    facilitator, claimed by a unique row, settled by the facilitator. ``header`` is the payment
    the request carries, if any. A call on a rail (RailCallPayment) and a purchase of credits
    (CreditsPurchasePayment) pay through it, each saying what is paid for."""

    def __init__(self, *, resource: Resource, header: str | None, header_name: str | None):
        self.resource = resource
        self.header = header
        self.header_name = header_name
        self.claim: RailPayment | None = None
        self.response_headers: dict[str, str] = {}
        self._payload = None
        self._requirements = None

    # -- verify and claim --------------------------------------------------------------------

    def _verify_and_claim(
        self,
        *,
        amount_micros: int,
        description: str,
        request_id: str,
        endpoint=None,
        credits_account_id: int | None = None,
    ) -> None:
        """Verify the request's payment of ``amount_micros`` and claim it for ``request_id``, or
        raise the 402 that says why not (503 when the facilitator cannot be reached)."""
        if self.header is None:
            raise self._payment_required(amount_micros, description, "Payment required")
        try:
            payload = payment_decode(self.header)
            authorization = payment_authorization(payload)
        except PaymentUnreadable as error:
            raise self._payment_required(amount_micros, description, str(error)) from None
        if self.resource.protocol == NP and isinstance(payload, PaymentPayloadV1):
            raise self._payment_required(
                amount_micros, description, "The np rail takes x402 version 2 payments"
            )
        offered = self._offered(amount_micros, description)
        try:
            requirements = requirements_matching(
                protocol=self.resource.protocol, payload=payload, offered=offered
            )
        except ValueError:
            requirements = None
        if requirements is None:
            raise self._payment_required(
                amount_micros, description, "No matching payment requirements"
            )

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
            raise self._payment_required(
                amount_micros, description, verdict.invalid_reason or "The payment is not valid"
            )

        claim = payment_claim(
            protocol=self.resource.protocol,
            x402_version=payload.x402_version,
            network=str(requirements.network),
            payer=(verdict.payer or authorization.payer).lower(),
            nonce=authorization.nonce,
            pay_to=authorization.pay_to,
            amount_micros=amount_micros,
            endpoint=endpoint,
            credits_account_id=credits_account_id,
            request_id=request_id,
            payload=payload.model_dump(by_alias=True, exclude_none=True),
            requirements=requirements.model_dump(by_alias=True, exclude_none=True),
            verify_ms=verify_ms,
        )
        if claim is None:
            raise self._payment_required(
                amount_micros, description, "This payment was already used; sign a new one"
            )
        self.claim, self._payload, self._requirements = claim, payload, requirements

    # -- settle ------------------------------------------------------------------------------

    def _settle_claim(
        self, claim: RailPayment, *, upstream_ms: int | None, description: str
    ) -> None:
        """Settle a claimed x402 payment now; what the settlement books is the claim's (see
        rails.services.payment_settle_record)."""
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
                    upstream_ms=upstream_ms,
                    settle_ms=settle_ms,
                )
                raise PaymentUnavailable(
                    "The payment could not be settled, so the answer is withheld; nothing was "
                    "charged"
                ) from None
            payment_pending(
                payment=claim, upstream_ms=upstream_ms, settle_ms=settle_ms, reason=str(error)
            )
            self.response_headers["Payment-Settlement"] = "pending"
            return
        settle_ms = int((time.monotonic() - started) * 1000)
        if not result.success:
            reason = result.error_reason or "settlement_failed"
            payment_failed(
                payment=claim, reason=reason, upstream_ms=upstream_ms, settle_ms=settle_ms
            )
            error = self._payment_required(
                claim.amount_micros, description, f"The payment could not be settled: {reason}"
            )
            error.headers[self._response_header()] = encode_payment_response_header(result)
            raise error
        payment_settle_record(
            payment=claim,
            transaction_ref=result.transaction,
            upstream_ms=upstream_ms,
            settle_ms=settle_ms,
        )
        self._receipt(result)

    def _receipt(self, result: SettleResponse) -> None:
        self.response_headers[self._response_header()] = encode_payment_response_header(result)

    def _response_header(self) -> str:
        return X_PAYMENT_RESPONSE if self.header_name == X_PAYMENT else PAYMENT_RESPONSE

    # -- the challenge -----------------------------------------------------------------------

    @abc.abstractmethod
    def _offers(self, amount_micros: int) -> list[dict]:
        """The contract's payment offer records for the 402's body."""

    def _offered(self, amount_micros: int, description: str) -> list:
        protocol = self.resource.protocol
        requirements = list(
            offers.payment_requirements(protocol=protocol, amount_micros=amount_micros)
        )
        if protocol == X402:
            requirements += self._v1_requirements(amount_micros, description)
        return requirements

    def _v1_requirements(self, amount_micros: int, description: str) -> list:
        return offers.payment_requirements_v1(
            amount_micros=amount_micros,
            resource_url=self.resource.url,
            description=description,
            mime_type="application/json",
        )

    def _payment_required(
        self, amount_micros: int, description: str, error: str
    ) -> PaymentRequired:
        """402: the contract's offers in the body, x402 v2's PAYMENT-REQUIRED header, and on the
        x402 rail the v1 fields (x402Version, accepts) in the same body for v1 clients."""
        protocol = self.resource.protocol
        extra = {
            "priceCents": micros_to_cents(amount_micros),
            "offers": self._offers(amount_micros),
        }
        if protocol == X402:
            v1 = PaymentRequiredV1(
                error=error, accepts=self._v1_requirements(amount_micros, description)
            )
            extra.update(v1.model_dump(by_alias=True, exclude_none=True, exclude={"error"}))
        headers = {"Cache-Control": "no-store"}
        if protocol in (X402, NP):
            required = offers.payment_required(
                protocol=protocol,
                amount_micros=amount_micros,
                resource_url=self.resource.url,
                description=description,
                mime_type="application/json",
                error=error,
            )
            headers[PAYMENT_REQUIRED] = encode_payment_required_header(required)
        return PaymentRequired(error, extra=extra, headers=headers)


class RailCallPayment(X402Payment):
    """One call of a catalog endpoint on the x402 or np rail."""

    settles_before_delivery = True

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
        self._verify_and_claim(
            amount_micros=quote_micros,
            description=_description(call),
            request_id=call.request_id,
            endpoint=endpoint,
        )

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
        self._settle_claim(
            claim, upstream_ms=record.latency_ms, description=_description(record.call)
        )

    # -- the challenge -----------------------------------------------------------------------

    def _offers(self, amount_micros: int) -> list[dict]:
        return offers.payment_offers(
            slug=self.resource.slug, path=self.resource.path, amount_micros=amount_micros
        )

    def _challenge(self, call: Call, quote_micros: int, error: str) -> PaymentRequired:
        return self._payment_required(quote_micros, _description(call), error)


def _description(call: Call) -> str:
    endpoint = call.endpoint
    return (endpoint.summary or endpoint.description or call.description)[:300]
