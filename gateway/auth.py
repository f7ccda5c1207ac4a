from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from gateway.errors import Unauthorized
from gateway.selectors import api_key_authenticate
from gateway.services import api_key_touch


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer gw_live_…` on every /v1 endpoint.

    ``request.user`` and ``request.auth`` are both the ``KeyPrincipal``.
    """

    def authenticate(self, request):
        header = get_authorization_header(request).decode("latin-1").strip()
        if not header:
            raise AuthenticationFailed("Missing API key: send Authorization: Bearer <key>")
        scheme, _, secret = header.partition(" ")
        secret = secret.strip()
        if scheme.lower() != "bearer" or not secret or " " in secret:
            raise AuthenticationFailed("Malformed Authorization header: expected Bearer <key>")
        try:
            principal = api_key_authenticate(secret=secret)
        except Unauthorized as error:
            raise AuthenticationFailed(error.message) from None
        api_key_touch(api_key_id=principal.key_id)
        return principal, principal

    def authenticate_header(self, request):
        return 'Bearer realm="gateway"'


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = ApiKeyAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "gw_live_… or gw_test_…",
            "description": "A gateway API key. Live keys are charged; test keys call sandboxes.",
        }
