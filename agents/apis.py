"""MCP_URL: the tool server, over the Model Context Protocol's streamable HTTP transport.

Every POST carries one JSON-RPC message (or, before protocol 2025-06-18, a batch) and gets its
answer as one JSON body; nothing is streamed, so GET (a stream of server-initiated messages)
and DELETE (the end of a session) answer 405. The caller's gateway key is the bearer token, and
the key's rate limit counts each POST, as on /v1. Failures of the transport itself answer a
JSON-RPC error with id null and the HTTP status the spec names, never the /v1 envelope.
"""

import json
import logging
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from rest_framework import exceptions as drf
from rest_framework.views import APIView

from agents.protocol import Reply, error_message, mcp_reply
from gateway.parsers import MAX_JSON_DEPTH, json_depth_exceeds

logger = logging.getLogger("agents.apis")

PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
# A tool's JSON body sits three levels down (message, params, arguments): the same depth as
# /v1/run allows its body.
MAX_MESSAGE_DEPTH = MAX_JSON_DEPTH + 3


def _answer(reply: Reply) -> HttpResponse:
    if reply.body is None:
        response = HttpResponse(status=reply.status)
    else:
        response = HttpResponse(
            json.dumps(reply.body, ensure_ascii=False, separators=(",", ":")),
            status=reply.status,
            content_type="application/json",
        )
    for name, value in reply.headers.items():
        response[name] = value
    return response


def _refusal(status: int, message: str, *, code: int = INVALID_REQUEST, data=None, **headers):
    return _answer(Reply(status, error_message(code, message, data=data), headers))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _accepts_json(accept: str) -> bool:
    media_types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(media_types & {"application/json", "application/*", "*/*"})


@extend_schema(exclude=True)  # JSON-RPC, described by the MCP specification, not by OpenAPI
class McpApi(APIView):
    parser_classes = []  # the body is a JSON-RPC message, read below

    def post(self, request):
        refused = self._refused_transport(request)
        if refused is not None:
            return refused
        version = request.headers.get(PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return _refusal(
                400,
                f"Unsupported {PROTOCOL_VERSION_HEADER}: {version}",
                data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version},
            )
        try:
            raw = request.body
        except RequestDataTooBig:
            return _refusal(
                413, f"The message exceeds the limit of {settings.MAX_REQUEST_BODY_BYTES} bytes"
            )
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError) as problem:
            return _refusal(400, f"Parse error: {problem}", code=PARSE_ERROR)
        if json_depth_exceeds(payload, MAX_MESSAGE_DEPTH):
            return _refusal(400, f"The message nests deeper than {MAX_MESSAGE_DEPTH} levels")
        return _answer(mcp_reply(payload=payload, principal=request.auth, protocol_version=version))

    def _refused_transport(self, request) -> HttpResponse | None:
        origin = request.headers.get("Origin")
        if origin is not None and origin.lower() not in self._trusted_origins(request):
            # A page of another site must not reach the tools through a visitor's network.
            return _refusal(403, f"Origin {origin} is not allowed")
        content_type = (request.content_type or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return _refusal(415, "Send the JSON-RPC message with Content-Type: application/json")
        accept = request.headers.get("Accept")
        if accept and not _accepts_json(accept):
            return _refusal(406, "This server answers application/json: accept it")
        return None

    def _trusted_origins(self, request) -> set[str]:
        trusted = {_origin(settings.GATEWAY_BASE_URL), _origin(request.build_absolute_uri("/"))}
        return trusted | {origin.lower() for origin in settings.CSRF_TRUSTED_ORIGINS}

    def handle_exception(self, exc):
        if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
            return _refusal(
                401,
                f"{exc.detail} The tool server takes your gateway key as a bearer token.",
                **{"WWW-Authenticate": 'Bearer realm="gateway"'},
            )
        if isinstance(exc, drf.Throttled):
            wait = max(1, int(exc.wait or 1))
            return _refusal(
                429,
                f"Rate limit exceeded for this API key; retry after {wait} s",
                **{"Retry-After": str(wait)},
            )
        if isinstance(exc, drf.MethodNotAllowed):
            # GET would open a stream of server-initiated messages and DELETE end a session:
            # this server sends none and keeps none.
            return _refusal(405, f"{exc.detail} POST one JSON-RPC message per request.")
        logger.exception("Unhandled error on the tool server", exc_info=exc)
        return _refusal(500, "Internal error; the failure was logged", code=INTERNAL_ERROR)
