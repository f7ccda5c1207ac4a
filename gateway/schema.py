from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

STANDARD_ERRORS = {
    400: "INVALID_REQUEST: malformed JSON, wrong Content-Type, missing or out-of-bounds field "
    "(the message names the field)",
    401: "UNAUTHORIZED: the API key is missing, malformed, unknown or revoked",
    404: "NOT_FOUND: unknown route, API or endpoint",
    405: "METHOD_NOT_ALLOWED: the route exists with other methods",
    413: "PAYLOAD_TOO_LARGE: the body exceeds MAX_REQUEST_BODY_BYTES",
    429: "RATE_LIMITED: too many requests for this key; see the Retry-After header",
    500: "INTERNAL_ERROR: an unexpected failure, logged by the gateway",
}
AUTHENTICATED_ONLY = {401, 429}


class ErrorEnvelopeSerializer(serializers.Serializer):
    success = serializers.BooleanField(default=False)
    error = serializers.CharField(help_text="A human-readable message")
    code = serializers.CharField(help_text="A machine-readable code such as INVALID_REQUEST")


class GatewayAutoSchema(AutoSchema):
    """Documents the error envelope on every operation next to its own responses."""

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
