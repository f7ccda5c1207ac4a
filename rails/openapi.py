"""The machine-readable description of a rail: OpenAPI 3.1.0, version 1.0.0, one operation per
payable endpoint, answering 200 with the provider's data or 402 with the payment offers (and on
the x402 rail the purchase of credits in USDC).
Built once per catalog version and kept per process."""

import re
import threading

from catalog.models import Endpoint
from catalog.paths import PLACEHOLDER
from catalog.version import catalog_version_current
from credits.services.purchases import PURCHASE_MAX_MICROS, PURCHASE_MIN_MICROS
from gateway.money import MICROS_PER_CENT
from rails.offers import NP, X402, rail_for

DOCUMENT_VERSION = "1.0.0"
PARAM_TYPES = {"integer", "number", "string", "boolean", "array", "object"}

_cache: dict[tuple[str, int], dict] = {}
_lock = threading.Lock()


def operation_id(*, slug: str, method: str, path: str) -> str:
    """``<slug>_<METHOD>_<path with non-alphanumerics as _>``."""
    return f"{slug}_{method.upper()}_{re.sub(r'[^A-Za-z0-9]', '_', path)}"


def rail_openapi_document(*, protocol: str) -> dict:
    version = catalog_version_current()
    key = (protocol, version)
    document = _cache.get(key)
    if document is None:
        document = _document(protocol)
        with _lock:
            _cache.clear()
            _cache[key] = document
    return document


def _payable_endpoints():
    return (
        Endpoint.objects.filter(enabled=True, is_payable=True, api__enabled=True)
        .select_related("api")
        .order_by("api__slug", "path", "method")
    )


def _document(protocol: str) -> dict:
    rail = rail_for(protocol)
    paths: dict[str, dict] = {}
    for endpoint in _payable_endpoints():
        path = f"/{endpoint.api.slug}{endpoint.path}"
        paths.setdefault(path, {})[endpoint.method.lower()] = _operation(endpoint)
    components = {"schemas": _schemas(), "responses": _responses()}
    if protocol == X402:
        paths["/credits/purchase"] = {"post": _purchase_operation()}
        components["securitySchemes"] = {
            "bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "gw_live_…"}
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"API Gateway: the {protocol} pay-per-call rail",
            "version": DOCUMENT_VERSION,
            "description": _description(protocol),
        },
        "servers": [{"url": rail.base_url}],
        "paths": paths,
        "components": components,
    }


def _description(protocol: str) -> str:
    how = {
        X402: "Pay with an x402 client (v2 PAYMENT-SIGNATURE, or v1 X-PAYMENT) in USDC.",
        NP: "Pay with an x402 v2 client in USDC; payments are settled in batches.",
    }.get(protocol, "Pay with the Payment HTTP authentication scheme in USDC.e.")
    return (
        "Every payable catalog endpoint at <slug><provider path>, with the catalog's method. "
        "A request without payment is answered 402 with the payment offers; " + how
    )


def _operation(endpoint: Endpoint) -> dict:
    operation = {
        "operationId": operation_id(
            slug=endpoint.api.slug, method=endpoint.method, path=endpoint.path
        ),
        "summary": (endpoint.summary or endpoint.description or endpoint.path)[:300],
        "tags": [endpoint.api.slug],
        "responses": {
            "200": {"description": "The provider's answer, unmodified"},
            "402": {"$ref": "#/components/responses/PaymentRequired"},
        },
        "x-price": _price(endpoint),
    }
    parameters = [_parameter(param, "path", required=True) for param in _path_params(endpoint)] + [
        _parameter(param, "query", required=bool(param.get("required")))
        for param in endpoint.query_params
    ]
    if parameters:
        operation["parameters"] = parameters
    if endpoint.takes_body:
        operation["requestBody"] = _request_body(endpoint)
    return operation


def _purchase_operation() -> dict:
    """POST /credits/purchase (rails.purchases): credits for a live key's account, in USDC."""
    return {
        "operationId": "credits_purchase",
        "summary": "Buy credits for the account of a live gateway key, paid in USDC",
        "tags": ["credits"],
        "security": [{"bearerAuth": []}],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["amountCents"],
                        "additionalProperties": False,
                        "properties": {
                            "amountCents": {
                                "type": "integer",
                                "minimum": PURCHASE_MIN_MICROS // MICROS_PER_CENT,
                                "maximum": PURCHASE_MAX_MICROS // MICROS_PER_CENT,
                                "description": "whole cents; the price of the request",
                            }
                        },
                    }
                }
            },
        },
        "responses": {
            "200": {"description": "Settled and booked: {success, purchase, balance}"},
            "202": {"description": "Claimed; booked when its settlement answers"},
            "400": {"description": "An amount out of bounds"},
            "401": {"description": "No valid gateway key"},
            "403": {"description": "A test key"},
            "402": {"$ref": "#/components/responses/PaymentRequired"},
        },
    }


def _path_params(endpoint: Endpoint) -> list[dict]:
    documented = {param["name"]: param for param in endpoint.path_params}
    return [
        documented.get(name, {"name": name, "type": "string"})
        for name in PLACEHOLDER.findall(endpoint.path)
    ]


def _schema(param: dict) -> dict:
    kind = param.get("type")
    return {"type": kind} if kind in PARAM_TYPES else {}


def _parameter(param: dict, location: str, *, required: bool) -> dict:
    parameter = {"name": param["name"], "in": location, "required": required}
    parameter["schema"] = _schema(param)
    if param.get("description"):
        parameter["description"] = str(param["description"])[:500]
    return parameter


def _request_body(endpoint: Endpoint) -> dict:
    properties = {param["name"]: _schema(param) for param in endpoint.body_params}
    required = [param["name"] for param in endpoint.body_params if param.get("required")]
    schema: dict = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    content_type = endpoint.body_content_type or "application/json"
    if content_type.startswith("multipart/"):
        content_type = "application/json"
    return {"required": bool(required), "content": {content_type: {"schema": schema}}}


def _price(endpoint: Endpoint) -> dict:
    kind = endpoint.price_kind
    if kind == Endpoint.PriceKind.DYNAMIC:
        return {
            "kind": "dynamic",
            "inputMicrosPerMillionTokens": endpoint.input_micros_per_mtok,
            "outputMicrosPerMillionTokens": endpoint.output_micros_per_mtok,
        }
    return {"kind": kind, "micros": endpoint.price_micros}


def _schemas() -> dict:
    offer = {
        "type": "object",
        "required": ["method", "intent", "rail", "currency", "amount", "url"],
        "properties": {
            "method": {"type": "string", "enum": ["mpp", "x402", "np"]},
            "intent": {"type": "string", "const": "charge"},
            "rail": {"type": "string", "description": "network identifier (CAIP-2)"},
            "currency": {"type": "string", "enum": ["USDC", "USDC.e"]},
            "amount": {"type": "string", "description": "in the stablecoin, e.g. 0.01"},
            "url": {"type": "string", "format": "uri"},
            "settlement": {"type": "string", "description": "np only"},
            "version": {"type": "string", "description": "np only: x402-v2"},
        },
    }
    return {
        "PaymentOffer": offer,
        "PaymentRequired": {
            "type": "object",
            "required": ["success", "error", "code", "priceCents", "offers"],
            "properties": {
                "success": {"type": "boolean", "const": False},
                "error": {"type": "string"},
                "code": {"type": "string", "const": "PAYMENT_REQUIRED"},
                "priceCents": {"type": "number"},
                "offers": {"type": "array", "items": {"$ref": "#/components/schemas/PaymentOffer"}},
                "x402Version": {"type": "integer", "description": "x402 rail: 1, for v1 clients"},
                "accepts": {
                    "type": "array",
                    "items": {"type": "object"},
                    "description": "x402 rail: the x402 v1 payment requirements",
                },
            },
        },
    }


def _responses() -> dict:
    return {
        "PaymentRequired": {
            "description": "Payment required: the offers for all three protocols. x402 v2 "
            "clients read the PAYMENT-REQUIRED header.",
            "headers": {
                "PAYMENT-REQUIRED": {
                    "schema": {"type": "string"},
                    "description": "base64 JSON of x402 v2 PaymentRequired",
                }
            },
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/PaymentRequired"}}
            },
        }
    }
