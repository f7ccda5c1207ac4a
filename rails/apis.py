"""The rails' HTTP surface: ``{rail url}/<slug><provider path>`` with the catalog's method, and
``{rail url}/openapi.json``. No gateway key: a request pays for itself, and requests are
counted per client address. Also ``{X402_URL}/credits/purchase``, which takes a gateway key:
credits bought in USDC for that key's account."""

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, JsonResponse
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from calls.pipeline import (
    CallInput,
    CallStream,
    StreamEnd,
    call_execute,
    call_lapse_seconds,
    call_stream,
)
from calls.run import new_request_id
from calls.streams import event_stream_response, is_stream_request
from credits.models import Account, Purchase
from credits.services.accounts import account_id_for_owner
from credits.services.purchases import (
    PURCHASE_MAX_MICROS,
    PURCHASE_MIN_MICROS,
    purchase_amount_validate,
)
from gateway.errors import Forbidden, InvalidRequest, NotFound, PayloadTooLarge, RateLimited
from gateway.inflight import InFlightSlot, in_flight_slot, released_at_end
from gateway.inputs import DigitsIntegerField, RequestBodySerializer
from gateway.money import MICROS_PER_CENT, format_usd, micros_to_cents
from gateway.ratelimit import window_count
from rails.models import RailPayment
from rails.mpp.payment import MppCallPayment
from rails.offers import MPP, X402, rail_url
from rails.openapi import rail_openapi_document
from rails.payment import PAYMENT_SIGNATURE, X_PAYMENT, RailCallPayment, Resource
from rails.purchases import CreditsPurchasePayment, new_purchase_request_id, purchase_record

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


def _client_address_slot(request, *, streaming: bool) -> InFlightSlot:
    """A slot of the client address's calls in flight (gateway.inflight), or RATE_LIMITED."""
    return in_flight_slot(
        subject=f"rail:{request.META.get('REMOTE_ADDR', '')}",
        limit=settings.RAIL_CALLS_IN_FLIGHT_PER_ADDRESS,
        lapse_seconds=call_lapse_seconds(streaming=streaming),
        holder="This address",
        calls="rail calls",
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


# A catch-all has no one shape to document: each rail's own openapi.json lists its endpoints.
@extend_schema(exclude=True)
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
        streaming = is_stream_request(call_input.body)
        slot = _client_address_slot(request, streaming=streaming)
        try:
            if streaming:
                result = call_stream(
                    request=call_input,
                    payment=payment,
                    request_id=self.request_id,
                    trailer=self._trailer,
                )
            else:
                result = call_execute(
                    request=call_input, payment=payment, request_id=self.request_id
                )
        except BaseException:
            slot.release()
            raise
        if isinstance(result, CallStream):
            response = event_stream_response(
                events=released_at_end(result.events, slot),
                request_id=result.request_id,
                quote_micros=result.quote_micros,
            )
        else:
            slot.release()
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


class CreditsPurchaseApi(APIView):
    """``POST {X402_URL}/credits/purchase {amountCents}`` with a live gateway key: credits for
    the key's account, paid in USDC on the x402 rail. Answered 402 with the rail's offers for
    the amount asked until a payment of it comes; settled at once, the purchase is booked."""

    request_id = ""

    class CreditsPurchaseInputSerializer(RequestBodySerializer):
        amountCents = DigitsIntegerField(
            min_value=PURCHASE_MIN_MICROS // MICROS_PER_CENT,
            max_value=PURCHASE_MAX_MICROS // MICROS_PER_CENT,
            help_text="whole cents, 100 = one dollar",
        )

    def initial(self, request, *args, **kwargs):
        _rails_enabled()
        super().initial(request, *args, **kwargs)

    def post(self, request):
        principal = request.auth
        if principal.is_test:
            raise Forbidden(
                "Test keys are never charged, so they cannot buy credits: buy with a live key "
                "(gw_live_...)"
            )
        serializer = self.CreditsPurchaseInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        amount_micros = serializer.validated_data["amountCents"] * MICROS_PER_CENT
        purchase_amount_validate(amount_micros=amount_micros)
        account_id = account_id_for_owner(
            user_id=principal.user_id, organization_id=principal.organization_id
        )
        header_name, header = _payment_header(request)
        payment = CreditsPurchasePayment(
            header=header,
            header_name=header_name,
            account_id=account_id,
            amount_micros=amount_micros,
        )
        self.request_id = new_purchase_request_id()
        claim = payment.pay(request_id=self.request_id)
        if claim.status == RailPayment.Status.SETTLED:
            purchase = Purchase.objects.get(
                method=Purchase.Method.USDC, reference=f"rail:{claim.pk}"
            )
            body, status = {"success": True, "purchase": purchase_record(purchase)}, 200
        else:
            body, status = (
                {
                    "success": True,
                    "purchase": None,
                    "settlement": "pending",
                    "message": "The payment is claimed but its settlement did not answer in "
                    "time; the credits are booked when it settles. Do not pay again.",
                },
                202,
            )
        available = Account.objects.with_balance().get(pk=account_id).available_micros
        response = Response({**body, "balance": format_usd(available)}, status=status)
        for name, value in payment.response_headers.items():
            response[name] = value
        response["Cache-Control"] = "no-store"
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.request_id:
            response["X-Request-Id"] = self.request_id
        return response
