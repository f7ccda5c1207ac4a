import logging
import time

from django.conf import settings
from django.core.exceptions import RequestDataTooBig

from gateway.errors import (
    DATABASE_UNAVAILABLE,
    ApiError,
    InternalError,
    PayloadTooLarge,
    database_unavailable,
    error_response,
)

logger = logging.getLogger("gateway.errors")

# gunicorn refuses a request line past 4094 bytes with a bare 414; below that, the gateway
# answers its own, in the envelope, at a round figure the OpenAPI document states.
MAX_URL_CHARS = 4000


class LengthRequired(ApiError):
    status_code = 411
    code = "LENGTH_REQUIRED"
    default_message = (
        "Send the request body with a Content-Length header; chunked transfer encoding is "
        "not accepted"
    )


class UriTooLong(ApiError):
    status_code = 414
    code = "URI_TOO_LONG"
    default_message = (
        f"The path and query string exceed {MAX_URL_CHARS} characters; send long inputs in the body"
    )


def _url_chars(request) -> int:
    query = request.META.get("QUERY_STRING", "")
    return len(request.META.get("PATH_INFO", "")) + (len(query) + 1 if query else 0)


def is_api_path(path: str) -> bool:
    return path.startswith("/v1/")


class ApiEnvelopeMiddleware:
    """Keeps every /v1 answer inside the envelope, even for failures outside a DRF view."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # Django reads a body up to its Content-Length: without one, a chunked body would be
        # read as empty and the request run without its inputs.
        if "HTTP_TRANSFER_ENCODING" in request.META:
            return error_response(LengthRequired())
        if not is_api_path(request.path):
            return self.get_response(request)
        if _url_chars(request) > MAX_URL_CHARS:
            return error_response(UriTooLong())
        request.gateway_started = time.perf_counter()
        try:
            # Reading the body here enforces DATA_UPLOAD_MAX_MEMORY_SIZE before any view runs.
            request.body  # noqa: B018
        except RequestDataTooBig:
            return error_response(
                PayloadTooLarge(
                    f"Request body exceeds the limit of {settings.MAX_REQUEST_BODY_BYTES} bytes"
                )
            )
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_api_path(request.path):
            return None
        if isinstance(exception, DATABASE_UNAVAILABLE):
            return error_response(database_unavailable(exception))
        logger.exception("Unhandled error on %s %s", request.method, request.path)
        return error_response(InternalError())
