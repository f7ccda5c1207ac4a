"""The official x402 SDK at the rails' edge: reading a payment header, and verifying and settling
a payment through the rail's facilitator (x402 and np each name their own).

The SDK's resource server learns what its facilitator supports on first use (``GET /supported``),
so a facilitator that is down costs paid requests a 503, never the unpaid 402s, which are built
from settings alone (rails.offers).
"""

import threading
from dataclasses import dataclass

import httpx
from django.conf import settings
from x402 import x402ResourceServerSync
from x402.http import FacilitatorConfig, HTTPFacilitatorClientSync
from x402.http.utils import decode_payment_signature_header
from x402.mechanisms.evm.exact import ExactEvmServerScheme
from x402.schemas import PaymentPayload, PaymentRequirements, SettleResponse
from x402.schemas.v1 import PaymentPayloadV1, PaymentRequirementsV1

from rails.offers import NP, X402

Payload = PaymentPayload | PaymentPayloadV1
Requirements = PaymentRequirements | PaymentRequirementsV1


class FacilitatorUnavailable(Exception):
    """The facilitator could not be reached, or did not answer in time."""

    def __init__(self, message: str, *, timeout: bool = False):
        super().__init__(message)
        self.timeout = timeout


class PaymentUnreadable(Exception):
    """The payment header is not a payment this rail takes."""


@dataclass(frozen=True)
class Authorization:
    """Who pays how much to whom, read from an EIP-3009 payment, and its one-time nonce."""

    payer: str
    pay_to: str
    nonce: str
    value: int


def payment_decode(header: str) -> Payload:
    try:
        return decode_payment_signature_header(header)
    except Exception as error:  # base64, JSON and schema errors alike
        raise PaymentUnreadable(
            "The payment header is not a base64-encoded x402 payment payload"
        ) from error


def payment_authorization(payload: Payload) -> Authorization:
    authorization = payload.payload.get("authorization")
    if not isinstance(authorization, dict):
        raise PaymentUnreadable("The payment carries no EIP-3009 authorization")
    try:
        return Authorization(
            payer=str(authorization["from"]).lower(),
            pay_to=str(authorization["to"]).lower(),
            nonce=str(authorization["nonce"]).lower(),
            value=int(authorization["value"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise PaymentUnreadable("The payment's authorization is incomplete") from error


def requirements_matching(
    *, protocol: str, payload: Payload, offered: list[Requirements]
) -> Requirements | None:
    """The offered requirement the payment says it meets, if any (scheme, network, and for v2
    every advertised field, as the SDK compares them)."""
    if isinstance(payload, PaymentPayloadV1):
        return next(
            (
                requirement
                for requirement in offered
                if isinstance(requirement, PaymentRequirementsV1)
                and (requirement.scheme, requirement.network) == (payload.scheme, payload.network)
            ),
            None,
        )
    v2 = [item for item in offered if isinstance(item, PaymentRequirements)]
    return _resource_server(protocol).find_matching_requirements(v2, payload)


def payment_verify(*, protocol: str, payload: Payload, requirements: Requirements):
    """The facilitator's VerifyResponse (``is_valid``, ``invalid_reason``, ``payer``)."""
    server = _initialized(protocol)
    try:
        return server.verify_payment(payload, requirements).verify
    except httpx.TimeoutException as error:
        raise FacilitatorUnavailable(
            "The facilitator did not answer in time", timeout=True
        ) from error
    except (httpx.HTTPError, ValueError) as error:
        raise FacilitatorUnavailable(f"The facilitator failed: {error}") from error


def payment_settle(
    *, protocol: str, payload: Payload, requirements: Requirements
) -> SettleResponse:
    server = _initialized(protocol)
    try:
        return server.settle_payment(payload, requirements)
    except httpx.TimeoutException as error:
        raise FacilitatorUnavailable(
            "The facilitator did not answer in time", timeout=True
        ) from error
    except (httpx.HTTPError, ValueError) as error:
        raise FacilitatorUnavailable(f"The facilitator failed: {error}") from error


def facilitator_url(protocol: str) -> str:
    return {X402: settings.X402_FACILITATOR_URL, NP: settings.NP_FACILITATOR_URL}[protocol]


_servers: dict[tuple[str, str], x402ResourceServerSync] = {}
_initialized_servers: set[tuple[str, str]] = set()
_lock = threading.Lock()


def _resource_server(protocol: str) -> x402ResourceServerSync:
    key = (protocol, facilitator_url(protocol))
    server = _servers.get(key)
    if server is None:
        with _lock:
            server = _servers.get(key)
            if server is None:
                facilitator = HTTPFacilitatorClientSync(
                    FacilitatorConfig(url=key[1], timeout=settings.RAIL_FACILITATOR_TIMEOUT_SECONDS)
                )
                server = x402ResourceServerSync(facilitator)
                server.register("eip155:*", ExactEvmServerScheme())
                _servers[key] = server
    return server


def _initialized(protocol: str) -> x402ResourceServerSync:
    url = facilitator_url(protocol)
    if not url:
        raise FacilitatorUnavailable(f"No facilitator is configured for the {protocol} rail")
    server = _resource_server(protocol)
    key = (protocol, url)
    if key not in _initialized_servers:
        with _lock:
            if key not in _initialized_servers:
                try:
                    server.initialize()
                except (httpx.HTTPError, ValueError, RuntimeError) as error:
                    raise FacilitatorUnavailable(
                        f"The {protocol} facilitator could not be reached: {error}",
                        timeout=isinstance(error, httpx.TimeoutException),
                    ) from error
                _initialized_servers.add(key)
    return server
