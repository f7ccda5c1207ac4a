"""The errors a Gateway call raises, one class per thing a caller handles differently.

Every error carries the gateway's envelope: ``message`` (its ``error``), ``code`` (``NOT_FOUND``,
``INSUFFICIENT_CREDITS``...), the HTTP ``status`` and the ``request_id`` of a /v1/run request,
and ``body``, the whole decoded answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class GatewayError(Exception):
    """Any failure of a gateway call; the subclasses below say which kind."""

    def __init__(
        self,
        message: str,
        code: str | None = None,
        status: int | None = None,
        request_id: str | None = None,
        *,
        body: Mapping[str, Any] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.body: Mapping[str, Any] = body or {}


class AuthError(GatewayError):
    """No key, or the key is unknown or revoked (401), or may not do this (403)."""


class InsufficientCredits(GatewayError):
    """402: the balance does not cover the price; nothing was called or charged."""

    @property
    def price_cents(self) -> float | None:
        return self.body.get("priceCents")


class NotFound(GatewayError):
    """404: no such API, endpoint or route."""


class InvalidRequest(GatewayError):
    """400, 405, 413, or an Idempotency-Key conflict (409, 422): the request must change."""


class RateLimited(GatewayError):
    """429 after the retries: the key sent too many requests this minute."""

    def __init__(self, *args: Any, retry_after: int | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class UpstreamError(GatewayError):
    """The provider failed (502), timed out (504) or refused (its own 4xx); not charged."""

    @property
    def upstream_status(self) -> int | None:
        return self.body.get("upstreamStatus")

    @property
    def data(self) -> Any:
        return self.body.get("data")


class NetworkError(GatewayError):
    """The gateway could not be reached or did not answer in time."""


_CLASS_BY_STATUS: dict[int, type[GatewayError]] = {
    400: InvalidRequest,
    401: AuthError,
    402: InsufficientCredits,
    403: AuthError,
    404: NotFound,
    405: InvalidRequest,
    409: InvalidRequest,
    413: InvalidRequest,
    422: InvalidRequest,
    429: RateLimited,
    502: UpstreamError,
    504: UpstreamError,
}


def error_from_answer(status: int, body: Any, headers: Mapping[str, str]) -> GatewayError:
    """The error for a gateway answer that is not a success."""
    envelope = body if isinstance(body, dict) else {}
    message = envelope.get("error") or f"the gateway answered HTTP {status}"
    code = envelope.get("code")
    request_id = envelope.get("requestId") or headers.get("X-Request-Id")
    # A provider's own 4xx keeps its status (a provider 404 is not an unknown API): the code says.
    if code == "UPSTREAM_ERROR":
        error_class: type[GatewayError] = UpstreamError
    else:
        error_class = _CLASS_BY_STATUS.get(status, GatewayError)
    extra: dict[str, Any] = {}
    if error_class is RateLimited:
        retry_after = headers.get("Retry-After", "")
        extra["retry_after"] = int(retry_after) if retry_after.isdigit() else None
    return error_class(message, code, status, request_id, body=envelope, **extra)
