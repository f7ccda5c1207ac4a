"""A local x402 facilitator: a WSGI application (JSON in and out) over an OfflineChain.

It speaks the facilitator HTTP API as the SDK's `HTTPFacilitatorClientSync` calls it, for x402
v2 and v1 payloads, and answers with the SDK's own models:

- `GET /supported` -> SupportedResponse (the kinds the SDK's exact EVM facilitator registers);
- `POST /verify`, `POST /settle`, body `{x402Version, paymentPayload, paymentRequirements}` ->
  VerifyResponse / SettleResponse. An invalid payment is a 200 with `isValid: false` or
  `success: false` and the SDK's reason string; a malformed body is a 400 `{error}`.
  Exact payments go through the SDK's `x402FacilitatorSync` with
  `register_exact_evm_facilitator` and the offline signer: no verification logic is copied.

The np rail's batched payments (`extra = {"name": "GatewayWalletBatched", "version": "1"}`, see
`batched.py`) are verified by `POST /verify` too, and settle only in batches:

- `POST /batches`, body `{"batchId", "x402Version": 2, "payments": [{"paymentPayload",
  "paymentRequirements"}, ...]}` -> 200 `{"batchId", "success", "transaction", "network",
  "results": [{"payer", "nonce", "success", "errorReason"?}]}`. Every valid payment settles in
  one transaction; `success` is false when none did. Idempotent by batch id: the same id again
  answers the recorded result and settles nothing. An authorization already settled (by another
  batch or earlier in this one) is `errorReason: "nonce_already_used"`.
- `GET /batches/<batchId>` -> the recorded answer, or 404.
- `POST /settle` of a batched payment is refused with `unsupported_scheme`.

Fault knobs, attributes a test sets on the application in its own process:

- `settle_failures_left` / `settle_failure_reason`: the next N settlements (`/settle` or
  `/batches`) fail with that reason and settle nothing (`fail_next_settles(n, reason)`);
- `settle_delay_seconds`: a settlement happens at once, its answer is sent that much later, so a
  caller with a shorter timeout gives up on a payment that did settle;
- `crashes_after_settle_left`: the next N settlements happen (a batch is recorded) and then
  the answer is a 500, as if the facilitator died after the chain accepted them;
- `verify_unavailable`: `/verify` answers 503.

Counters a test reads: `settles_performed` (successful `/settle` settlements),
`batches_performed` (batch transactions), `settlements` ((payer, nonce) lower-cased -> times
settled, both ways), `requests` ("METHOD /path" -> count).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ValidationError
from x402 import x402FacilitatorSync
from x402.mechanisms.evm.constants import ERR_TRANSACTION_FAILED, ERR_UNSUPPORTED_SCHEME
from x402.mechanisms.evm.exact.register import register_exact_evm_facilitator
from x402.mechanisms.evm.types import ExactEIP3009Payload
from x402.schemas import (
    BaseX402Model,
    PaymentRequirements,
    SchemeNotFoundError,
    SettleResponse,
    VerifyResponse,
)
from x402.schemas.helpers import parse_payment_payload, parse_payment_requirements

from sandbox.facilitator.batched import (
    BatchBook,
    BatchedPayment,
    BatchRequestError,
    batched_verify,
    is_batched,
)
from sandbox.facilitator.chain import OfflineChain
from sandbox.facilitator.signer import OfflineEvmSigner

logger = logging.getLogger(__name__)

StartResponse = Callable[..., Any]

_STATUS_TEXT = {
    200: "200 OK",
    400: "400 Bad Request",
    404: "404 Not Found",
    405: "405 Method Not Allowed",
    500: "500 Internal Server Error",
    503: "503 Service Unavailable",
}


class RequestError(ValueError):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class FacilitatorApp:
    def __init__(self, chain: OfflineChain | None = None):
        self.chain = chain or OfflineChain()
        self.signer = OfflineEvmSigner(self.chain)
        self.facilitator = x402FacilitatorSync()
        register_exact_evm_facilitator(
            self.facilitator, self.signer, networks=list(self.chain.networks)
        )
        self.batch_book = BatchBook(self.chain)

        self.settle_failures_left = 0
        self.settle_failure_reason = ERR_TRANSACTION_FAILED
        self.settle_delay_seconds = 0.0
        self.crashes_after_settle_left = 0
        self.verify_unavailable = False

        self.settles_performed = 0
        self.batches_performed = 0
        self.settlements: Counter[tuple[str, str]] = Counter()
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fail_next_settles(self, count: int, reason: str = ERR_TRANSACTION_FAILED) -> None:
        with self._lock:
            self.settle_failures_left = count
            self.settle_failure_reason = reason

    # -- WSGI ----------------------------------------------------------------------------

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        path = environ.get("PATH_INFO", "/").rstrip("/") or "/"
        with self._lock:
            self.requests[f"{method} {path}"] += 1
        try:
            status, body = self._route(method, path, environ)
        except RequestError as exc:
            status, body = exc.status, {"error": str(exc)}
        except Exception as exc:
            logger.exception("%s %s failed", method, path)
            status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
        payload = json.dumps(body).encode()
        start_response(
            _STATUS_TEXT[status],
            [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))],
        )
        return [payload]

    def _route(self, method: str, path: str, environ: dict[str, Any]) -> tuple[int, Any]:
        routes: dict[str, dict[str, Callable[[dict[str, Any]], tuple[int, Any]]]] = {
            "/supported": {"GET": self._supported},
            "/verify": {"POST": self._verify},
            "/settle": {"POST": self._settle},
            "/batches": {"POST": self._batches},
        }
        if path.startswith("/batches/") and method == "GET":
            return self._batch_answer(path.removeprefix("/batches/"))
        handlers = routes.get(path)
        if handlers is None:
            raise RequestError(404, f"no route {path}")
        handler = handlers.get(method)
        if handler is None:
            raise RequestError(405, f"{path} takes {', '.join(handlers)}")
        return handler(environ)

    # -- the facilitator API -------------------------------------------------------------

    def _supported(self, environ: dict[str, Any]) -> tuple[int, Any]:
        supported = self.facilitator.get_supported()
        # The SDK registers v1 for every legacy network; list only those the chain runs.
        kinds = [kind for kind in supported.kinds if self.chain.runs(str(kind.network))]
        return 200, _dump(supported.model_copy(update={"kinds": kinds}))

    def _verify(self, environ: dict[str, Any]) -> tuple[int, Any]:
        if self.verify_unavailable:
            raise RequestError(503, "verification is unavailable")
        payload, requirements = _payment_of(_json_body(environ))
        if isinstance(requirements, PaymentRequirements) and is_batched(requirements):
            return 200, _dump(batched_verify(self.chain, payload, requirements))
        try:
            self._require_network_of(payload)
            result = self.facilitator.verify(payload, requirements)
        except SchemeNotFoundError as exc:
            result = VerifyResponse(
                is_valid=False,
                invalid_reason=ERR_UNSUPPORTED_SCHEME,
                invalid_message=str(exc),
                payer=_payer_of(payload),
            )
        return 200, _dump(result)

    def _settle(self, environ: dict[str, Any]) -> tuple[int, Any]:
        payload, requirements = _payment_of(_json_body(environ))
        network = str(requirements.network)
        if isinstance(requirements, PaymentRequirements) and is_batched(requirements):
            return 200, _dump(
                _settle_failure(
                    ERR_UNSUPPORTED_SCHEME,
                    network,
                    payload,
                    "GatewayWalletBatched payments settle through POST /batches",
                )
            )
        failure_reason = self._take_settle_failure()
        if failure_reason is not None:
            return 200, _dump(_settle_failure(failure_reason, network, payload))
        try:
            self._require_network_of(payload)
            result = self.facilitator.settle(payload, requirements)
        except SchemeNotFoundError as exc:
            result = _settle_failure(ERR_UNSUPPORTED_SCHEME, network, payload, str(exc))
        if result.success:
            with self._lock:
                self.settles_performed += 1
                self.settlements[_payment_key(payload)] += 1
        return self._after_settlement(_dump(result))

    def _batches(self, environ: dict[str, Any]) -> tuple[int, Any]:
        body = _json_body(environ)
        batch_id = body.get("batchId")
        if not isinstance(batch_id, str) or not batch_id:
            raise RequestError(400, "batchId must be a non-empty string")
        recorded = self.batch_book.answer(batch_id)
        if recorded is not None:
            return 200, recorded
        if body.get("x402Version") != 2:
            raise RequestError(400, "batched payments are x402Version 2")
        items = body.get("payments")
        if not isinstance(items, list) or not items:
            raise RequestError(400, "payments must be a non-empty list")
        try:
            payments = [BatchedPayment.parse(item) for item in items]
        except BatchRequestError as exc:
            raise RequestError(400, str(exc)) from exc
        failure_reason = self._take_settle_failure()
        if failure_reason is not None:
            return 200, _failed_batch(batch_id, payments, failure_reason)
        try:
            answer, settled_now = self.batch_book.settle(batch_id, payments)
        except BatchRequestError as exc:
            raise RequestError(400, str(exc)) from exc
        if not settled_now:
            return 200, answer
        with self._lock:
            if answer["transaction"]:
                self.batches_performed += 1
            for payment, result in zip(payments, answer["results"], strict=True):
                if result["success"]:
                    self.settlements[(payment.payer.lower(), payment.nonce.lower())] += 1
        return self._after_settlement(answer)

    def _require_network_of(self, payload: Any) -> None:
        # The SDK facilitator matches any eip155 network once two are registered, and the
        # signer routes by token address alone: a payment for a chain the double does not run
        # must not reach the token of one it does.
        network = str(payload.get_network())
        if not self.chain.runs(network):
            raise SchemeNotFoundError(payload.get_scheme(), network)

    def _batch_answer(self, batch_id: str) -> tuple[int, Any]:
        answer = self.batch_book.answer(batch_id)
        if answer is None:
            raise RequestError(404, f"no batch {batch_id}")
        return 200, answer

    # -- fault knobs ---------------------------------------------------------------------

    def _take_settle_failure(self) -> str | None:
        with self._lock:
            if self.settle_failures_left <= 0:
                return None
            self.settle_failures_left -= 1
            return self.settle_failure_reason

    def _after_settlement(self, answer: Any) -> tuple[int, Any]:
        """The answer of a settlement that happened, delayed or lost as the knobs say."""
        if self.settle_delay_seconds > 0:
            time.sleep(self.settle_delay_seconds)
        with self._lock:
            crash = self.crashes_after_settle_left > 0
            if crash:
                self.crashes_after_settle_left -= 1
        if crash:
            raise RequestError(500, "the facilitator failed after the settlement")
        return 200, answer


def _json_body(environ: dict[str, Any]) -> dict[str, Any]:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    raw = environ["wsgi.input"].read(length) if length > 0 else b""
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise RequestError(400, "the body is not JSON") from exc
    if not isinstance(body, dict):
        raise RequestError(400, "the body is a JSON object")
    return body


def _payment_of(body: dict[str, Any]) -> tuple[Any, Any]:
    version = body.get("x402Version")
    if version not in (1, 2):
        raise RequestError(400, "x402Version must be 1 or 2")
    raw_payload = body.get("paymentPayload")
    raw_requirements = body.get("paymentRequirements")
    if not isinstance(raw_payload, dict) or not isinstance(raw_requirements, dict):
        raise RequestError(400, "paymentPayload and paymentRequirements are JSON objects")
    try:
        payload = parse_payment_payload(raw_payload)
        requirements = parse_payment_requirements(version, raw_requirements)
        ExactEIP3009Payload.from_dict(payload.payload)
    except (ValidationError, ValueError, KeyError, TypeError) as exc:
        raise RequestError(400, f"malformed payment: {exc}") from exc
    if payload.x402_version != version:
        raise RequestError(400, "x402Version differs from the payload's")
    return payload, requirements


def _payer_of(payload: Any) -> str:
    return ExactEIP3009Payload.from_dict(payload.payload).authorization.from_address


def _payment_key(payload: Any) -> tuple[str, str]:
    authorization = ExactEIP3009Payload.from_dict(payload.payload).authorization
    return authorization.from_address.lower(), authorization.nonce.lower()


def _settle_failure(
    reason: str, network: str, payload: Any, message: str | None = None
) -> SettleResponse:
    return SettleResponse(
        success=False,
        error_reason=reason,
        error_message=message,
        payer=_payer_of(payload),
        transaction="",
        network=network,
    )


def _failed_batch(batch_id: str, payments: list[BatchedPayment], reason: str) -> dict[str, Any]:
    return {
        "batchId": batch_id,
        "success": False,
        "transaction": "",
        "network": str(payments[0].requirements.network),
        "errorReason": reason,
        "results": [
            {"payer": p.payer, "nonce": p.nonce, "success": False, "errorReason": reason}
            for p in payments
        ],
    }


def _dump(model: BaseX402Model) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True)
