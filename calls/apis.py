"""POST /v1/run: the view turns the request into a RunInput and the service's result into the
answer, with the request id and the gateway's own share of the time in headers."""

import time

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from calls.run import RunInput, new_request_id, run_execute
from calls.streams import event_stream_response
from catalog.models import Endpoint
from gateway.errors import UpstreamError
from gateway.inputs import CallerPathField, RequestBodySerializer
from gateway.schema import ErrorEnvelopeSerializer


class RunInputSerializer(RequestBodySerializer):
    """The optional fields may also be null, which means absent: clients that serialise every
    field of a typed request send null for the ones they leave out."""

    api = serializers.CharField(max_length=100, help_text="provider API slug")
    path = CallerPathField(
        max_length=2000, help_text="catalog path, or a concrete path matching its template"
    )
    body = serializers.JSONField(
        required=False, allow_null=True, help_text="JSON body for POST/PUT/PATCH"
    )
    query = serializers.DictField(
        required=False, allow_null=True, help_text="query-string parameters"
    )
    pathParams = serializers.DictField(
        required=False,
        allow_null=True,
        help_text="values of the path template's placeholders, by name",
    )
    parentRequestId = serializers.CharField(
        required=False,
        allow_null=True,
        max_length=80,
        help_text="continue a charged request (a next page)",
    )
    method = serializers.ChoiceField(
        choices=Endpoint.Method.values,
        required=False,
        allow_null=True,
        help_text="only when a path has several",
    )

    def validate_body(self, body):
        if body is not None and not isinstance(body, dict | list):
            raise serializers.ValidationError("must be a JSON object or array")
        return body


class RunBillingSerializer(serializers.Serializer):
    requestId = serializers.CharField()
    parentRequestId = serializers.CharField(required=False)
    charged = serializers.BooleanField()


class RunOutputSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    priceCents = serializers.FloatField(help_text="price of the call in cents (100 = $1)")
    data = serializers.JSONField(help_text="the provider's answer, unmodified")
    requestId = serializers.CharField(help_text="run_<epoch millis>_<suffix>")
    billing = RunBillingSerializer()


class RunInsufficientCreditsSerializer(ErrorEnvelopeSerializer):
    priceCents = serializers.FloatField()


class RunUpstreamErrorSerializer(ErrorEnvelopeSerializer):
    data = serializers.JSONField(allow_null=True)
    upstreamStatus = serializers.IntegerField(allow_null=True)
    requestId = serializers.CharField()


class RunApi(APIView):
    upstream_ms = 0.0  # the provider's share of this request's time

    @extend_schema(
        operation_id="run",
        summary="Execute a provider endpoint",
        description=(
            "The gateway picks the HTTP method from the catalog, sends `query` as the query "
            "string and `body` as JSON, charges the price and returns the provider's answer. "
            "Send `parentRequestId` (the `billing.requestId` of a charged first page) with "
            "unchanged non-pagination parameters to fetch further pages without a new charge."
        ),
        request=RunInputSerializer,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="up to 255 characters; a retry with the same key and request "
                "replays the first answer for 24 hours and is not charged again",
            )
        ],
        responses={
            200: RunOutputSerializer,
            402: OpenApiResponse(RunInsufficientCreditsSerializer, "INSUFFICIENT_CREDITS"),
            403: OpenApiResponse(
                ErrorEnvelopeSerializer, "FORBIDDEN: a test key on an API without a sandbox"
            ),
            409: OpenApiResponse(ErrorEnvelopeSerializer, "IDEMPOTENCY_IN_PROGRESS"),
            422: OpenApiResponse(ErrorEnvelopeSerializer, "IDEMPOTENCY_MISMATCH"),
            502: OpenApiResponse(
                RunUpstreamErrorSerializer,
                "UPSTREAM_ERROR: the provider failed (4xx answers keep the provider's status)",
            ),
            504: OpenApiResponse(RunUpstreamErrorSerializer, "UPSTREAM_ERROR: timeout"),
        },
    )
    def post(self, request):
        request_id = new_request_id()
        self.headers["X-Request-Id"] = request_id
        serializer = RunInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        run = RunInput(
            api=data["api"],
            path=data["path"],
            query=data.get("query") or {},
            body=data.get("body"),
            has_body=data.get("body") is not None,
            path_params=data.get("pathParams") or {},
            parent_request_id=data.get("parentRequestId"),
            method=data.get("method"),
        )
        try:
            result = run_execute(
                principal=request.auth,
                run=run,
                request_id=request_id,
                idempotency_key=request.headers.get("Idempotency-Key"),
            )
        except UpstreamError as error:
            self.upstream_ms = error.upstream_ms
            raise
        # A replayed answer carries the id of the request that first got it.
        self.headers["X-Request-Id"] = result.request_id
        self.upstream_ms = result.upstream_ms
        if result.replayed:
            self.headers["Idempotent-Replayed"] = "true"
        if result.stream is not None:
            return event_stream_response(
                events=result.stream.events,
                request_id=result.stream.request_id,
                quote_micros=result.stream.quote_micros,
            )
        return Response(result.body, status=result.status)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        started = getattr(request._request, "gateway_started", None)
        if started is not None:
            total_ms = (time.perf_counter() - started) * 1000
            overhead = total_ms - self.upstream_ms
            response["X-Gateway-Overhead-Ms"] = f"{max(overhead, 0):.2f}"
        return response
