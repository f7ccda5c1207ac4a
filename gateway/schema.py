from decimal import Decimal

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

from gateway.inputs import CALLER_PATH_PATTERN, NOT_BLANK_PATTERN, CallerPathField
from gateway.middleware import MAX_URL_CHARS

STANDARD_ERRORS = {
    400: "INVALID_REQUEST: malformed JSON, wrong Content-Type, missing or out-of-bounds field "
    "(the message names the field)",
    401: "UNAUTHORIZED: the API key is missing, malformed, unknown or revoked",
    404: "NOT_FOUND: unknown route, API or endpoint",
    405: "METHOD_NOT_ALLOWED: the route exists with other methods",
    411: "LENGTH_REQUIRED: a body sent with chunked transfer encoding; send a Content-Length",
    413: "PAYLOAD_TOO_LARGE: the body exceeds MAX_REQUEST_BODY_BYTES",
    414: f"URI_TOO_LONG: the path and query string exceed {MAX_URL_CHARS} characters",
    429: "RATE_LIMITED: too many requests for this key; see the Retry-After header",
    500: "INTERNAL_ERROR: an unexpected failure, logged by the gateway",
    503: "SERVICE_UNAVAILABLE: the gateway's database is unavailable, or the worker is at its "
    "calls to providers in flight; retry after Retry-After",
}
AUTHENTICATED_ONLY = {401, 429}


class ErrorEnvelopeSerializer(serializers.Serializer):
    success = serializers.BooleanField(default=False)
    error = serializers.CharField(help_text="A human-readable message")
    code = serializers.CharField(help_text="A machine-readable code such as INVALID_REQUEST")


class GatewayAutoSchema(AutoSchema):
    """Documents the error envelope on every operation next to its own responses, and the rules
    the server applies to inputs beyond their types, so a client built from the schema sends
    nothing the server refuses."""

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction != "request":
            return schema
        if isinstance(field, serializers.DecimalField) and schema.get("type") == "number":
            schema["multipleOf"] = float(Decimal(1).scaleb(-field.decimal_places))
            return schema
        if schema.get("type") != "string":
            return schema
        if isinstance(field, CallerPathField):
            schema["pattern"] = CALLER_PATH_PATTERN
        elif (
            isinstance(field, serializers.CharField)
            and field.trim_whitespace
            and not field.allow_blank
            and "pattern" not in schema
            and "enum" not in schema
        ):
            # The server trims a string before it checks it, so one of spaces is blank.
            schema["pattern"] = NOT_BLANK_PATTERN
        return schema

    # _get_response_bodies is the one place that sees the responses of both plain views and
    # @extend_schema overrides (which replace get_response_serializers).
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        authenticated = bool(self.view.get_authenticators())
        for status, description in STANDARD_ERRORS.items():
            if status in AUTHENTICATED_ONLY and not authenticated:
                continue
            if str(status) not in responses:
                response = self._get_response_for_code(
                    ErrorEnvelopeSerializer, str(status), direction=direction
                )
                response["description"] = description
                responses[str(status)] = response
        return responses


class RequestBodySchema(OpenApiSerializerExtension):
    """Request bodies refuse fields they do not declare; their schemas say so, for clients and
    agent platforms that build calls from this description."""

    target_class = "gateway.inputs.RequestBodySerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        schema["additionalProperties"] = False
        return schema
