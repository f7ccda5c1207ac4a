import logging
import time

from django.conf import settings
from django.core.exceptions import RequestDataTooBig

from gateway.errors import InternalError, PayloadTooLarge, error_response

logger = logging.getLogger("gateway.errors")


def is_api_path(path: str) -> bool:
    return path.startswith("/v1/")


class ApiEnvelopeMiddleware:
    """Keeps every /v1 answer inside the envelope, even for failures outside a DRF view."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api_path(request.path):
            return self.get_response(request)
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
        logger.exception("Unhandled error on %s %s", request.method, request.path)
        return error_response(InternalError())
