"""The rails' HTTP surface: ``{rail url}/<slug><provider path>`` with the catalog's method, and
``{rail url}/openapi.json``. No gateway key: a request pays for itself, and requests are
counted per client address."""

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from rest_framework.views import APIView

from calls.pipeline import CallInput, CallStream, StreamEnd, call_execute, call_stream
from calls.run import new_request_id
from calls.streams import event_stream_response, is_stream_request
from gateway.errors import InvalidRequest, NotFound, PayloadTooLarge, RateLimited
from gateway.money import micros_to_cents
from gateway.ratelimit import window_count
from rails.mpp.payment import MppCallPayment
from rails.offers import MPP, X402, rail_url
from rails.openapi import rail_openapi_document
from rails.payment import PAYMENT_SIGNATURE, X_PAYMENT, RailCallPayment, Resource

BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def _rails_enabled() -> None:
    if not settings.RAILS_ENABLED:
        raise NotFound("The pay-per-call rails are not enabled on this gateway (RAIL_PAY_TO)")


def _client_address_count(request) -> None:
    if not settings.RATE_LIMIT_ENABLED:
        return
    address = request.META.get("REMOTE_ADDR", "")
    count, retry_after = window_count(subject=f"rail:{address}", window_seconds=60)
    if count > settings.RAIL_RATE_LIMIT_PER_MINUTE:
        raise RateLimited(
            f"More than {settings.RAIL_RATE_LIMIT_PER_MINUTE} rail requests a minute from this "
            "address",
            retry_after=retry_after,
        )


class RailApiBase(APIView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = []
    protocol: str = X402

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        _rails_enabled()
        _client_address_count(request)


class RailCallApi(RailApiBase):
    """Any catalog endpoint on a rail: 402 with the offers until it is paid for."""

    request_id = ""

    def get(self, request, slug, path=""):
        return self._serve(request, slug, path)

    post = put = patch = delete = head = options = get

    def _serve(self, request, slug: str, path: str):
        self.request_id = new_request_id()
        path = path or "/"
        resource = Resource(
            protocol=self.protocol,
            url=rail_url(protocol=self.protocol, slug=slug, path=path),
            slug=slug,
            path=path,
        )
        if self.protocol == MPP:
            payment = MppCallPayment(
                resource=resource,
                authorization=request.headers.get("Authorization"),
                method=request.method,
                query=request.META.get("QUERY_STRING", ""),
            )
        else:
            header_name, header = _payment_header(request)
            payment = RailCallPayment(resource=resource, header=header, header_name=header_name)
        call_input = _call_input(request, slug, path)
        if is_stream_request(call_input.body):
            result = call_stream(
                request=call_input,
                payment=payment,
                request_id=self.request_id,
                trailer=self._trailer,
            )
        else:
            result = call_execute(request=call_input, payment=payment, request_id=self.request_id)
        if isinstance(result, CallStream):
            response = event_stream_response(
                events=result.events,
                request_id=result.request_id,
                quote_micros=result.quote_micros,
            )
        else:
            response = HttpResponse(
                result.content,
                status=result.status,
                content_type=result.content_type or "application/json",
            )
        for name, value in payment.response_headers.items():
            response[name] = value
        response["Cache-Control"] = "no-store"
        return response

    def _trailer(self, end: StreamEnd) -> dict:
        """A rail's stream was paid in full before its first event (the payment covers the
        most the call can cost), however the stream ends."""
        return {
            "requestId": self.request_id,
            "priceCents": micros_to_cents(end.price_micros),
            "ending": end.ending,
        }

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.request_id:
            response["X-Request-Id"] = self.request_id
        return response


class RailOpenApiDocumentApi(RailApiBase):
    """OpenAPI 3.1.0 of the rail: one operation per payable endpoint."""

    def get(self, request):
        return JsonResponse(rail_openapi_document(protocol=self.protocol))


def _payment_header(request) -> tuple[str | None, str | None]:
    for name in (PAYMENT_SIGNATURE, X_PAYMENT):
        value = request.headers.get(name)
        if value:
            return name, value
    return None, None


def _call_input(request, slug: str, path: str) -> CallInput:
    query = {
        name: values if len(values) > 1 else values[0]
        for name, values in request.query_params.lists()
    }
    has_body = request.method in BODY_METHODS and _content_length(request) > 0
    body = _body(request) if has_body else None
    return CallInput(
        api=slug,
        path=path,
        method=request.method,
        query=query,
        body=body,
        has_body=has_body,
    )


def _content_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise InvalidRequest("Content-Length is not a number") from None


def _body(request):
    content_type = (request.content_type or "").split(";")[0].strip().lower()
    try:
        raw = request.body
    except RequestDataTooBig:
        raise PayloadTooLarge(
            f"Request body exceeds the limit of {settings.MAX_REQUEST_BODY_BYTES} bytes"
        ) from None
    if content_type in ("", "application/json") or content_type.endswith("+json"):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise InvalidRequest("The request body is not valid JSON") from None
    if content_type == "application/x-www-form-urlencoded":
        return {name: values[-1] for name, values in request.POST.lists()}
    raise InvalidRequest(
        f"Content-Type {content_type} is not taken on the rails; send JSON or a form"
    )
