from django.core.cache import cache
from django.db import connection
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from gateway.errors import NotFound


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
        description=(
            "503 when the database does not answer: the gateway cannot serve. A cache (Redis) "
            "that does not answer is 200 with status degraded: the gateway serves without it, "
            "so a load balancer checking the status code keeps the host."
        ),
        responses={200: HealthzOutputSerializer, 503: HealthzOutputSerializer},
    )
    def get(self, request):
        checks = {"database": _database_status(), "cache": _cache_status()}
        healthy = all(value == "ok" for value in checks.values())
        return Response(
            {"status": "ok" if healthy else "degraded", **checks},
            status=200 if checks["database"] == "ok" else 503,
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
