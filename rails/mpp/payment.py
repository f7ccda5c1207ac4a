"""Paying for one call on the mpp rail: the rails' side of calls.payment.Payment for the Payment
HTTP authentication scheme.

authorize: no credential -> 402 with the offers and a fresh ``WWW-Authenticate: Payment``
challenge; a credential -> its challenge authenticated and matched to this request (method, path,
query, price, currency, recipient, chain, expiry), the payment checked by the SDK without being
broadcast, then its transaction claimed by a unique row before the provider is called.
settle: a provider failure releases the claim (the signed transaction was never sent, so the
same credential may be retried); a served call is settled by the SDK (the transaction broadcast
and its transfer verified on chain) before the answer leaves, with ``Payment-Receipt``. A refused
settlement withholds the answer (402 with a fresh challenge: nothing moved); one whose outcome is
unknown (the transaction was sent, its receipt did not come back in time) is recorded as pending
and the answer is served with ``Payment-Settlement: pending``, as on the x402 rail: the payer is
never invited to pay twice, and ``rails_reconcile`` settles it from the transaction's receipt.
"""

import time

import httpx
from mpp import (
    Credential,
    CredentialReplayedError,
    InternalPaymentError,
    InvalidChallengeError,
    MalformedCredentialError,
    ParseError,
    PaymentError,
    PaymentOutcomeUnknownError,
)
from mpp.server import Request, VerificationError

from calls.payment import Call, CallRecord, Outcome
from gateway.errors import ApiError, NotFound
from rails.mpp.loop import LoopTimeout
from rails.mpp.server import (
    MppConfig,
    challenge_issue,
    credential_broadcast,
    credential_validate,
    echoed_request,
    mpp_config,
    rpc_chain_id,
)
from rails.payment import PaymentRequired, PaymentUnavailable, RailCallPayment, Resource
from rails.services import (
    payment_claim,
    payment_failed,
    payment_pending,
    payment_release,
    payment_settle_record,
)

PAYMENT_RECEIPT = "Payment-Receipt"
# Failures after which the payment may have landed: never answered with a fresh challenge.
UNKNOWN_OUTCOME = (InternalPaymentError, PaymentOutcomeUnknownError, LoopTimeout)
SETTLE_REFUSED = "The payment could not be settled, so the answer is withheld"


class PaymentRefused(ApiError):
    """The payment is valid but cannot pay for this request (it was already used): a fresh
    challenge would only invite an automatic client to pay again, so none is sent."""

    status_code = 403
    code = "PAYMENT_REFUSED"
    default_message = "This payment was already used; pay a new challenge"


class MppCallPayment(RailCallPayment):
    """One request on the mpp rail. ``authorization`` is its Authorization header, if any."""

    def __init__(self, *, resource: Resource, authorization: str | None, method: str, query: str):
        super().__init__(resource=resource, header=authorization, header_name="Authorization")
        self.http_method = method
        self.query = query
        self.config: MppConfig | None = None
        self._credential: Credential | None = None

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
        self.config = config = mpp_config()
        scheme = _payment_scheme(self.header)
        if scheme is None:
            raise self._mpp_challenge(call, quote_micros, "Payment required")
        try:
            credential = Credential.from_authorization(scheme)
        except (ParseError, ValueError, TypeError, KeyError) as error:
            raise self._refusal(call, quote_micros, MalformedCredentialError(str(error))) from None
        if echoed_request(credential).get("_mppx_scope") != self._request().scope():
            raise self._refusal(
                call,
                quote_micros,
                InvalidChallengeError(
                    credential.challenge.id,
                    "it was issued for another request (method, path or query); pay the "
                    "challenge of this address",
                ),
            )
        self._chain_reachable(config)

        started = time.monotonic()
        try:
            validation = credential_validate(
                config=config, credential=credential, amount_micros=quote_micros
            )
        except UNKNOWN_OUTCOME as error:
            raise _unavailable(error) from None
        except PaymentError as error:
            raise self._refusal(call, quote_micros, error) from None
        verify_ms = int((time.monotonic() - started) * 1000)

        request = {k: v for k, v in echoed_request(credential).items() if k != "_mppx_scope"}
        claim = payment_claim(
            protocol=self.resource.protocol,
            x402_version=0,
            network=f"eip155:{config.chain_id}",
            payer=(validation.payer or credential.source or "").lower(),
            nonce=_transaction_hash(credential),
            pay_to=config.recipient.lower(),
            amount_micros=quote_micros,
            endpoint=endpoint,
            request_id=call.request_id,
            payload={
                "challenge": credential.challenge.id,
                "source": credential.source,
                "payload": credential.payload,
            },
            requirements=request,
            verify_ms=verify_ms,
        )
        if claim is None:
            raise PaymentRefused(extra={"problem": _replayed_problem()})
        self.claim, self._credential = claim, credential

    def _chain_reachable(self, config: MppConfig) -> None:
        try:
            chain_id = rpc_chain_id(config)
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as error:
            raise PaymentUnavailable(
                f"The tempo RPC could not be reached ({type(error).__name__}), so the payment "
                "cannot be verified. Nothing was charged; retry later"
            ) from None
        if chain_id != config.chain_id:
            raise PaymentUnavailable(
                f"The tempo RPC serves chain {chain_id}, not chain {config.chain_id}. Nothing "
                "was charged"
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
                reason="The provider failed; the payment was not broadcast and may be retried",
            )
            return
        started = time.monotonic()
        try:
            receipt = credential_broadcast(
                config=self.config, credential=self._credential, amount_micros=claim.amount_micros
            )
        except UNKNOWN_OUTCOME as error:
            settle_ms = int((time.monotonic() - started) * 1000)
            refused = _refusal_cause(error)
            if _never_sent(error) or refused is not None:
                reason = str(refused) if refused else "The tempo RPC could not be reached"
                payment_failed(
                    payment=claim,
                    reason=reason,
                    upstream_ms=record.latency_ms,
                    settle_ms=settle_ms,
                )
                if refused is not None:
                    raise self._refusal(
                        record.call, claim.amount_micros, refused, prefix=SETTLE_REFUSED
                    ) from None
                raise PaymentUnavailable(
                    "The payment could not be settled, so the answer is withheld; nothing was "
                    "charged"
                ) from None
            payment_pending(
                payment=claim,
                upstream_ms=record.latency_ms,
                settle_ms=settle_ms,
                reason=f"The settlement's outcome is unknown: {_cause(error)}",
            )
            # Sent, and the provider answered: served, as on the x402 rail; rails_reconcile
            # reads the transaction's receipt later and books it, or records it failed.
            self.response_headers["Payment-Settlement"] = "pending"
            return
        except PaymentError as error:
            payment_failed(
                payment=claim,
                reason=str(error),
                upstream_ms=record.latency_ms,
                settle_ms=int((time.monotonic() - started) * 1000),
            )
            raise self._refusal(
                record.call, claim.amount_micros, error, prefix=SETTLE_REFUSED
            ) from None
        payment_settle_record(
            payment=claim,
            transaction_ref=receipt.reference,
            upstream_ms=record.latency_ms,
            settle_ms=int((time.monotonic() - started) * 1000),
        )
        self.response_headers[PAYMENT_RECEIPT] = receipt.to_payment_receipt()

    # -- the challenge -----------------------------------------------------------------------

    def _request(self) -> Request:
        url = self.resource.url + (f"?{self.query}" if self.query else "")
        return Request(self.http_method, url)

    def _mpp_challenge(
        self, call: Call, quote_micros: int, reason: str, problem: dict | None = None
    ) -> PaymentRequired:
        """402: the offers of every rail in the body, and MPP's own challenge, bound to this
        request, in ``WWW-Authenticate``."""
        error = self._challenge(call, quote_micros, reason)
        challenges = challenge_issue(
            config=self.config, request=self._request(), amount_micros=quote_micros
        )
        error.headers["WWW-Authenticate"] = ", ".join(challenges)
        if problem is not None:
            error.extra["problem"] = problem
        return error

    def _refusal(
        self, call: Call, quote_micros: int, error: PaymentError, prefix: str = ""
    ) -> ApiError:
        reason = f"{prefix}: {error}" if prefix else str(error)
        if error.status == 403:
            return PaymentRefused(reason, extra={"problem": error.to_problem_details()})
        return self._mpp_challenge(call, quote_micros, reason, error.to_problem_details())


def _payment_scheme(authorization: str | None) -> str | None:
    """The ``Payment ...`` credential among an Authorization header's schemes (RFC 9110 allows
    several, comma-separated; a credential itself has no comma)."""
    for scheme in (authorization or "").split(","):
        scheme = scheme.strip()
        if scheme.lower().startswith("payment "):
            return scheme
    return None


def _transaction_hash(credential: Credential) -> str:
    """The transaction a credential pays with: its hash (push), or the hash the signed
    transaction will have on chain (pull), which is the SDK's replay key too."""
    from mpp.methods.tempo.intents import _canonical_raw_transaction, _raw_transaction_hash

    payload = credential.payload
    if payload.get("type") == "hash":
        return str(payload.get("hash", "")).lower()
    return _raw_transaction_hash(_canonical_raw_transaction(str(payload.get("signature", ""))))


def _replayed_problem() -> dict:
    return CredentialReplayedError("Transaction hash already used").to_problem_details()


def _causes(error: BaseException):
    seen = error
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def _never_sent(error: BaseException) -> bool:
    """The RPC refused the connection: the transaction did not reach the chain."""
    return any(isinstance(cause, httpx.ConnectError) for cause in _causes(error))


def _refusal_cause(error: BaseException) -> VerificationError | None:
    """The chain's definite answer behind an internal error (the node rejected the transaction,
    or included it reverted): the payment did not land, so the payer may pay a new challenge."""
    return next((cause for cause in _causes(error) if isinstance(cause, VerificationError)), None)


def _cause(error: BaseException) -> str:
    causes = list(_causes(error))
    return str(causes[-1]) or type(causes[-1]).__name__


def _unavailable(error: BaseException) -> PaymentUnavailable:
    return PaymentUnavailable(
        f"The payment could not be verified ({_cause(error)}). Nothing was charged; retry later"
    )
