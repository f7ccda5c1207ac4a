import time

from django.core.cache import cache
from django.db import connection
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.models import Endpoint
from gateway.errors import NotFound, UpstreamError
from gateway.idempotency import (
    Replay,
    idempotency_abandon,
    idempotency_begin,
    idempotency_complete,
    request_fingerprint,
)
from gateway.inputs import RequestBodySerializer
from gateway.run import RunInput, new_request_id, run_execute
from gateway.schema import ErrorEnvelopeSerializer


class WhoAmIApi(APIView):
    class WhoAmIOutputSerializer(serializers.Serializer):
        success = serializers.BooleanField()
        data = inline_serializer(
            name="WhoAmIData",
            fields={
                "key": inline_serializer(
                    name="WhoAmIKey",
                    fields={
                        "masked": serializers.CharField(),
                        "name": serializers.CharField(),
                        "mode": serializers.ChoiceField(choices=["live", "test"]),
                    },
                ),
                "owner": inline_serializer(
                    name="WhoAmIOwner",
                    fields={
                        "type": serializers.ChoiceField(choices=["user", "organization"]),
                        "name": serializers.CharField(),
                    },
                ),
            },
        )

    @extend_schema(
        operation_id="whoami",
        summary="Who owns the presented key, and its mode",
        responses=WhoAmIOutputSerializer,
    )
    def get(self, request):
        key = request.auth
        return Response(
            {
                "success": True,
                "data": {
                    "key": {"masked": key.masked, "name": key.name, "mode": key.mode},
                    "owner": {"type": key.owner_type, "name": key.owner_label},
                },
            }
        )


class HealthzApi(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    class HealthzOutputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=["ok", "degraded"])
        database = serializers.CharField()
        cache = serializers.CharField()

    @extend_schema(
        operation_id="healthz",
        summary="Database and cache status",
        responses={200: HealthzOutputSerializer, 503: HealthzOutputSerializer},
    )
    def get(self, request):
        checks = {"database": _database_status(), "cache": _cache_status()}
        healthy = all(value == "ok" for value in checks.values())
        return Response(
            {"status": "ok" if healthy else "degraded", **checks}, status=200 if healthy else 503
        )


def _database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # a health check reports every failure instead of raising
        return f"error: {error.__class__.__name__}"
    return "ok"


def _cache_status() -> str:
    try:
        cache.set("healthz", "ok", timeout=5)
        if cache.get("healthz") != "ok":
            return "error: value not read back"
    except Exception as error:
        return f"error: {error.__class__.__name__}"
    return "ok"


@extend_schema(exclude=True)
class UnknownRouteApi(APIView):
    """Every /v1 path no route claims answers 404 in the envelope, whatever the method."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []

    def initial(self, request, *args, **kwargs):
        raise NotFound(f"No route for {request.method} {request.path}")


class RunInputSerializer(RequestBodySerializer):
    """The optional fields may also be null, which means absent: clients that serialise every
    field of a typed request send null for the ones they leave out."""

    api = serializers.CharField(max_length=100, help_text="provider API slug")
    path = serializers.CharField(
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
        request.gateway_request_id = new_request_id()
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
        claim = None
        idempotency_key = request.headers.get("Idempotency-Key")
        if idempotency_key is not None:
            claim = idempotency_begin(
                api_key_id=request.auth.key_id,
                key=idempotency_key,
                fingerprint=request_fingerprint(request.data),
            )
            if isinstance(claim, Replay):
                request.gateway_request_id = claim.body.get("requestId", "")
                response = Response(claim.body, status=claim.status)
                response["Idempotent-Replayed"] = "true"
                return response
        try:
            result = run_execute(
                principal=request.auth, run=run, request_id=request.gateway_request_id
            )
        except UpstreamError as error:
            request.gateway_upstream_ms = error.upstream_ms
            # The provider was called: the outcome is final for this key.
            if claim:
                idempotency_complete(record=claim, status=error.status_code, body=error.body())
            raise
        except BaseException:
            if claim:
                idempotency_abandon(record=claim)
            raise
        if claim:
            idempotency_complete(record=claim, status=result.status, body=result.body)
        request.gateway_upstream_ms = result.upstream_ms
        return Response(result.body, status=result.status)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        request_id = getattr(request, "gateway_request_id", None)
        if request_id:
            response["X-Request-Id"] = request_id
        started = getattr(request._request, "gateway_started", None)
        if started is not None:
            total_ms = (time.perf_counter() - started) * 1000
            overhead = total_ms - getattr(request, "gateway_upstream_ms", 0.0)
            response["X-Gateway-Overhead-Ms"] = f"{max(overhead, 0):.2f}"
        return response
