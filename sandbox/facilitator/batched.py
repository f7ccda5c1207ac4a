"""The np rail's batched payments: verification and idempotent batch settlement.

An np offer is x402 v2, scheme `exact`, with `extra = {"name": "GatewayWalletBatched",
"version": "1"}` (Circle Gateway's marker for batched EIP-3009 payments). The buyer signs an
EIP-3009 authorization whose EIP-712 domain is that name and version, the offer's chain id and
`verifyingContract` = the offer's `asset`. The SDK's exact facilitator checks a signature
against that domain but then simulates the transfer on the token, whose own domain differs, so
these payments are verified here with the SDK's EIP-712 and signature helpers, checking what the
SDK checks and with its reason strings.

A batch settles every valid payment it lists in one transaction and is recorded under its
batch id before it is answered: the same id again gets the recorded answer and settles nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from x402.mechanisms.evm.constants import (
    ERR_ASSET_NOT_DEPLOYED_CONTRACT,
    ERR_AUTHORIZATION_VALUE_MISMATCH,
    ERR_FAILED_TO_GET_NETWORK_CONFIG,
    ERR_FAILED_TO_VERIFY_SIGNATURE,
    ERR_INSUFFICIENT_BALANCE,
    ERR_INVALID_SIGNATURE,
    ERR_MISSING_EIP712_DOMAIN,
    ERR_NETWORK_MISMATCH,
    ERR_NONCE_ALREADY_USED,
    ERR_RECIPIENT_MISMATCH,
    ERR_UNSUPPORTED_SCHEME,
    ERR_VALID_AFTER_FUTURE,
    ERR_VALID_BEFORE_EXPIRED,
    SCHEME_EXACT,
)
from x402.mechanisms.evm.exact.eip3009_utils import (
    ParsedEIP3009Authorization,
    parse_eip3009_authorization,
    parse_eip3009_transfer_error,
)
from x402.mechanisms.evm.types import ExactEIP3009Payload
from x402.schemas import PaymentPayload, PaymentRequirements, VerifyResponse

from sandbox.facilitator.chain import (
    BATCHED_DOMAIN_NAME,
    BATCHED_DOMAIN_VERSION,
    OfflineChain,
    SignedAuthorization,
    signature_matches,
)

# The batch answer's reason for an authorization another batch (or this one) already used.
BATCH_NONCE_ALREADY_USED = "nonce_already_used"

# Like the SDK's verify: an authorization must stay valid a few seconds beyond the check.
VALID_BEFORE_MARGIN_SECONDS = 6


class BatchRequestError(ValueError):
    """A batch request that cannot be settled as sent (answered 400; nothing settles)."""


def is_batched(requirements: PaymentRequirements) -> bool:
    return (requirements.extra or {}).get("name") == BATCHED_DOMAIN_NAME


@dataclass(frozen=True)
class BatchedPayment:
    payload: PaymentPayload
    requirements: PaymentRequirements
    payer: str
    nonce: str

    @classmethod
    def parse(cls, item: Any) -> BatchedPayment:
        if not isinstance(item, dict):
            raise BatchRequestError("each payment is {paymentPayload, paymentRequirements}")
        try:
            payload = PaymentPayload.model_validate(item["paymentPayload"])
            requirements = PaymentRequirements.model_validate(item["paymentRequirements"])
            authorization = ExactEIP3009Payload.from_dict(payload.payload).authorization
        except (KeyError, TypeError, ValueError) as exc:
            raise BatchRequestError(f"malformed payment: {exc}") from exc
        return cls(
            payload=payload,
            requirements=requirements,
            payer=authorization.from_address,
            nonce=authorization.nonce,
        )


def terms_problem(
    chain: OfflineChain, payload: PaymentPayload, requirements: PaymentRequirements
) -> tuple[str | None, ParsedEIP3009Authorization | None]:
    """The SDK reason why the payment does not match the offer (scheme, network, domain,
    recipient, amount, asset), else None with the parsed authorization."""
    evm_payload = ExactEIP3009Payload.from_dict(payload.payload)
    authorization = evm_payload.authorization
    if payload.accepted.scheme != SCHEME_EXACT or requirements.scheme != SCHEME_EXACT:
        return ERR_UNSUPPORTED_SCHEME, None
    if payload.accepted.network != requirements.network:
        return ERR_NETWORK_MISMATCH, None
    try:
        token = chain.token(str(requirements.network))
    except KeyError:
        return ERR_FAILED_TO_GET_NETWORK_CONFIG, None
    extra = requirements.extra or {}
    if extra.get("name") != BATCHED_DOMAIN_NAME or extra.get("version") != BATCHED_DOMAIN_VERSION:
        return ERR_MISSING_EIP712_DOMAIN, None
    if authorization.to.lower() != requirements.pay_to.lower():
        return ERR_RECIPIENT_MISMATCH, None
    if int(authorization.value) != int(requirements.amount):
        return ERR_AUTHORIZATION_VALUE_MISMATCH, None
    if requirements.asset.lower() != token.address.lower():
        return ERR_ASSET_NOT_DEPLOYED_CONTRACT, None
    if not evm_payload.signature:
        return ERR_INVALID_SIGNATURE, None
    try:
        return None, parse_eip3009_authorization(authorization)
    except ValueError:
        return ERR_FAILED_TO_VERIFY_SIGNATURE, None


def batched_verify(
    chain: OfflineChain, payload: PaymentPayload, requirements: PaymentRequirements
) -> VerifyResponse:
    """Verify an np payment as the SDK verifies an exact one, against the batched domain."""
    payer = ExactEIP3009Payload.from_dict(payload.payload).authorization.from_address
    problem, authorization = terms_problem(chain, payload, requirements)
    if problem is not None or authorization is None:
        return VerifyResponse(is_valid=False, invalid_reason=problem, payer=payer)
    now = int(time.time())
    if authorization.valid_before < now + VALID_BEFORE_MARGIN_SECONDS:
        return VerifyResponse(is_valid=False, invalid_reason=ERR_VALID_BEFORE_EXPIRED, payer=payer)
    if authorization.valid_after > now:
        return VerifyResponse(is_valid=False, invalid_reason=ERR_VALID_AFTER_FUTURE, payer=payer)
    network = str(requirements.network)
    signature = _signature_bytes(payload)
    if not signature_matches(authorization, signature, chain.batched_domain(network)):
        return VerifyResponse(is_valid=False, invalid_reason=ERR_INVALID_SIGNATURE, payer=payer)
    if chain.authorization_state(network, payer, authorization.nonce, batched=True):
        return VerifyResponse(is_valid=False, invalid_reason=ERR_NONCE_ALREADY_USED, payer=payer)
    if chain.balance_of(network, payer) < authorization.value:
        return VerifyResponse(is_valid=False, invalid_reason=ERR_INSUFFICIENT_BALANCE, payer=payer)
    return VerifyResponse(is_valid=True, payer=payer)


class BatchBook:
    """Settles batches once each: the answer is recorded under the batch id before it leaves."""

    def __init__(self, chain: OfflineChain):
        self.chain = chain
        self._answers: dict[str, dict[str, Any]] = {}
        # One batch at a time: a retry racing the original must find its recorded answer.
        self._lock = threading.Lock()

    def answer(self, batch_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._answers.get(batch_id)

    def settle(self, batch_id: str, payments: list[BatchedPayment]) -> tuple[dict[str, Any], bool]:
        """Settle a batch; returns (answer, settled_now). A known batch id returns its
        recorded answer with settled_now False."""
        with self._lock:
            recorded = self._answers.get(batch_id)
            if recorded is not None:
                return recorded, False
            answer = self._settle(batch_id, payments)
            self._answers[batch_id] = answer
            return answer, True

    def _settle(self, batch_id: str, payments: list[BatchedPayment]) -> dict[str, Any]:
        network = _single_network(payments)
        results: list[dict[str, Any]] = []
        items: list[SignedAuthorization] = []
        positions: list[int] = []
        for payment in payments:
            result: dict[str, Any] = {
                "payer": payment.payer,
                "nonce": payment.nonce,
                "success": False,
            }
            problem, authorization = terms_problem(
                self.chain, payment.payload, payment.requirements
            )
            if problem is not None or authorization is None:
                result["errorReason"] = problem
            else:
                positions.append(len(results))
                items.append(SignedAuthorization(authorization, _signature_bytes(payment.payload)))
            results.append(result)
        execution = self.chain.batch_transfer_with_authorization(network, batch_id, items)
        for position, failure in zip(positions, execution.failures, strict=True):
            if failure is None:
                results[position]["success"] = True
            else:
                reason = parse_eip3009_transfer_error(failure)
                if reason == ERR_NONCE_ALREADY_USED:
                    reason = BATCH_NONCE_ALREADY_USED
                results[position]["errorReason"] = reason
        return {
            "batchId": batch_id,
            "success": bool(execution.tx_hash),
            "transaction": execution.tx_hash,
            "network": network,
            "results": results,
        }


def _single_network(payments: list[BatchedPayment]) -> str:
    networks = {str(payment.requirements.network) for payment in payments}
    if len(networks) != 1:
        raise BatchRequestError("a batch lists payments of exactly one network")
    return networks.pop()


def _signature_bytes(payload: PaymentPayload) -> bytes:
    signature = ExactEIP3009Payload.from_dict(payload.payload).signature or ""
    try:
        return bytes.fromhex(signature.removeprefix("0x"))
    except ValueError:
        return b""
