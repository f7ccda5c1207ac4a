"""The one error contract: every error under /v1 is {"success": false, "error", "code"}.

Services raise the ``ApiError`` subclasses below; ``exception_handler`` (DRF) and the /v1
middleware turn any exception into the envelope with ``error_response``. Nothing else builds
error bodies.
"""

import logging
import threading
import time

from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.views.defaults import server_error as django_server_error
from rest_framework import exceptions as drf

logger = logging.getLogger("gateway.errors")


class ApiError(drf.APIException):
    status_code = 500
    code = "INTERNAL_ERROR"
    default_message = "Internal error"

    def __init__(self, message: str | None = None, *, extra: dict | None = None, headers=None):
        self.message = message or self.default_message
        self.extra = extra or {}
        self.headers = headers or {}
        super().__init__(detail=self.message, code=self.code)

    def body(self) -> dict:
        return {"success": False, "error": self.message, "code": self.code, **self.extra}


class InvalidRequest(ApiError):
    status_code = 400
    code = "INVALID_REQUEST"
    default_message = "Invalid request"


class Unauthorized(ApiError):
    status_code = 401
    code = "UNAUTHORIZED"
    default_message = "Invalid or missing API key"


class InsufficientCredits(ApiError):
    status_code = 402
    code = "INSUFFICIENT_CREDITS"
    default_message = "Insufficient credits"


class Forbidden(ApiError):
    status_code = 403
    code = "FORBIDDEN"
    default_message = "This key may not do that"


class NotFound(ApiError):
    status_code = 404
    code = "NOT_FOUND"
    default_message = "Not found"


class MethodNotAllowed(ApiError):
    status_code = 405
    code = "METHOD_NOT_ALLOWED"
    default_message = "Method not allowed"


class Conflict(ApiError):
    status_code = 409
    code = "CONFLICT"
    default_message = "Conflict"


class PayloadTooLarge(ApiError):
    status_code = 413
    code = "PAYLOAD_TOO_LARGE"
    default_message = "Request body too large"


class RateLimited(ApiError):
    status_code = 429
    code = "RATE_LIMITED"
    default_message = "Too many requests"

    def __init__(self, message: str | None = None, *, retry_after: int, **kwargs):
        super().__init__(message, **kwargs)
        self.headers["Retry-After"] = str(max(1, int(retry_after)))


class UpstreamError(ApiError):
    status_code = 502
    code = "UPSTREAM_ERROR"
    default_message = "The provider failed"

    def __init__(
        self, message: str | None = None, *, status: int = 502, upstream_ms: float = 0, **kwargs
    ):
        super().__init__(message, **kwargs)
        self.status_code = status
        self.upstream_ms = upstream_ms


class InternalError(ApiError):
    status_code = 500
    code = "INTERNAL_ERROR"
    default_message = "Internal error; the failure was logged"


class ServiceUnavailable(ApiError):
    status_code = 503
    code = "SERVICE_UNAVAILABLE"
    default_message = "The gateway's database is unavailable; retry in a few seconds"
    retry_after_seconds = 2

    def __init__(self, message: str | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.headers.setdefault("Retry-After", str(self.retry_after_seconds))


class WorkerBusy(ServiceUnavailable):
    """The worker process that took the request has as many provider calls in flight as it
    lets run at once; another worker, or this one a moment later, serves the retry."""

    default_message = "The gateway is busy with calls to providers; retry in a second"
    retry_after_seconds = 1


class _RefusalLog:
    """Refusals come in bursts exactly when the server is under load: Django would log each
    503 as an error line. They are logged here instead, one warning a minute at most, saying
    how many it stands for."""

    def __init__(self, interval_seconds: float):
        self.interval_seconds = interval_seconds
        self._lock = threading.Lock()
        self._count = 0
        self._logged_at = float("-inf")

    def refused(self, message: str) -> None:
        with self._lock:
            self._count += 1
            now = time.monotonic()
            if now - self._logged_at < self.interval_seconds:
                return
            count, self._count, self._logged_at = self._count, 0, now
        logger.warning("%s (%d refused since the last such line)", message, count)


worker_busy_log = _RefusalLog(interval_seconds=60)


# What Django raises when PostgreSQL is down, restarting or unreachable, or ended the connection
# (and for a timeout or a deadlock the services did not absorb): the request can be retried.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)


def database_unavailable(exc: Exception) -> ServiceUnavailable:
    """The 503 for a database failure, logged in one line: during an outage every request
    fails the same way, and a traceback each would bury the cause."""
    reason = " ".join(str(exc).split())
    logger.error("Database unavailable: %s: %s", exc.__class__.__name__, reason)
    return ServiceUnavailable()


def error_response(error: ApiError) -> JsonResponse:
    response = JsonResponse(
        error.body(), status=error.status_code, json_dumps_params={"separators": (",", ":")}
    )
    for name, value in error.headers.items():
        response[name] = value
    if isinstance(error, WorkerBusy):
        worker_busy_log.refused(error.message)
        response._has_been_logged = True  # not again by Django, as an error
    return response


def _flatten_validation_errors(detail, prefix: str = "") -> list[str]:
    if isinstance(detail, dict):
        messages = []
        for field, inner in detail.items():
            name = prefix if field == "non_field_errors" else f"{prefix}{field}"
            messages.extend(_flatten_validation_errors(inner, f"{name}." if name else ""))
        return messages
    if isinstance(detail, list):
        messages = []
        for index, inner in enumerate(detail):
            # A list of dicts is a nested list serializer: name the item by its index.
            item_prefix = f"{prefix}{index}." if isinstance(inner, dict | list) else prefix
            messages.extend(_flatten_validation_errors(inner, item_prefix))
        return messages
    field = prefix.rstrip(".")
    return [f"{field}: {detail}" if field else str(detail)]


def as_api_error(exc: Exception) -> ApiError:
    """Translate DRF's and Django's exceptions into the gateway's own."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, drf.ValidationError):
        return InvalidRequest("; ".join(_flatten_validation_errors(exc.detail)))
    if isinstance(exc, drf.ParseError):
        return InvalidRequest(f"Malformed JSON body: {exc.detail}")
    if isinstance(exc, drf.UnsupportedMediaType):
        return InvalidRequest(f"{exc.detail} Send the body as application/json.")
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        return Unauthorized(str(exc.detail))
    if isinstance(exc, drf.PermissionDenied):
        return Forbidden(str(exc.detail))
    if isinstance(exc, drf.NotFound | Http404):
        return NotFound()
    if isinstance(exc, drf.MethodNotAllowed):
        return MethodNotAllowed(str(exc.detail))
    if isinstance(exc, drf.Throttled):
        return RateLimited(
            "Rate limit exceeded for this API key; retry after the number of seconds in "
            "the Retry-After header",
            retry_after=int(exc.wait or 1),
        )
    if isinstance(exc, drf.APIException):
        error = ApiError(str(exc.detail))
        error.status_code = exc.status_code
        return error
    if isinstance(exc, DATABASE_UNAVAILABLE):
        return database_unavailable(exc)
    logger.exception("Unhandled error", exc_info=exc)
    return InternalError()


def exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: every exception raised in an API view becomes the envelope."""
    error = as_api_error(exc)
    response = error_response(error)
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        response["WWW-Authenticate"] = 'Bearer realm="gateway"'
    return response


def server_error(request, *args, **kwargs):
    """handler500: the envelope under /v1, Django's page elsewhere."""
    if request.path.startswith("/v1/"):
        return error_response(InternalError())
    return django_server_error(request, *args, **kwargs)
