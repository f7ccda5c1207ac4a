"""The sandbox provider's two views: a ping and one catch-all that answers every seed operation.

Plain Django views on purpose: no gateway authentication, throttling or content negotiation,
no database, and as little work per request as possible (the benchmarks call them).
"""

import dataclasses
import time

from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponse, HttpResponseBase, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from sandbox.call import CONTROL_PARAMS, Call, stable_hash
from sandbox.errors import ProviderError, error_response
from sandbox.faults import Fault, fault_applies, fault_from, fault_response, fault_stream
from sandbox.handlers import as_handled, handler_for
from sandbox.handlers.common import Reply
from sandbox.spec import api_spec
from sandbox.validation import parse_json_body, validated_inputs

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PING = b'{"ok":true}'


@csrf_exempt
def sandbox_ping(request):
    try:
        fault = _fault_due(request, None, "_ping")
        response = None if fault is None else fault_response(fault, request)
        response = response or HttpResponse(PING, content_type="application/json")
        return response if fault is None else fault_stream(fault, response, request)
    except ProviderError as error:
        return error_response(None, error)


@csrf_exempt
def sandbox_call(request, slug: str, rest: str | None = None):
    api = api_spec(slug)
    if api is None:
        return error_response(
            None, ProviderError(404, "unknown_api", f"The sandbox has no API named {slug!r}")
        )
    try:
        return _answer(request, api, rest or "/")
    except ProviderError as error:
        return error_response(slug, error)


def _answer(request, api, path: str):
    operation, path_params, allowed = api.match(request.method, path)
    if operation is None:
        if allowed:
            raise ProviderError(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed on {path}; use {', '.join(allowed)}",
                headers={"Allow": ", ".join(allowed)},
            )
        raise ProviderError(404, "not_found", f"No route {request.method} {path} on {api.name}")
    body = _body(request)
    fault = _fault_due(request, body, api.slug)
    faulty = None if fault is None else fault_response(fault, request)
    if faulty is not None:
        return faulty
    if isinstance(body, dict) and CONTROL_PARAMS.intersection(body):
        body = {name: value for name, value in body.items() if name not in CONTROL_PARAMS}
    inputs, body = validated_inputs(as_handled(operation), request.GET, path_params, body)
    call = Call(api=api, op=operation, path=path, inputs=inputs, body=body, request=request)
    response = _respond(handler_for(api, operation)(call))
    return response if fault is None else fault_stream(fault, response, request)


def _body(request):
    if request.method not in BODY_METHODS:
        return None
    try:
        raw = request.body
    except RequestDataTooBig:
        raise ProviderError(413, "payload_too_large", "The request body is too large") from None
    return parse_json_body(raw)


def _fault_due(request, body, key_prefix: str) -> Fault | None:
    """The request's fault knobs, after their delay was slept; a fault whose first
    ``fail_times`` requests have passed keeps only its pacing."""
    fault = fault_from(request, body)
    if fault is None:
        return None
    if fault.delay_ms:
        time.sleep(fault.delay_ms / 1000)
    if fault.kind is None:
        return fault
    default_key = stable_hash(
        key_prefix, request.method, request.path, sorted(request.GET.lists()), body
    )
    if not fault_applies(fault, str(default_key)):
        return dataclasses.replace(fault, kind=None)
    return fault


def _respond(result):
    if isinstance(result, HttpResponseBase):
        return result
    if isinstance(result, Reply):
        response = JsonResponse(result.body, status=result.status, safe=False)
        for name, value in result.headers.items():
            response[name] = value
        return response
    return JsonResponse(result, safe=False)


def not_found(request, exception=None):
    """A path the sandbox served on its own (sandbox.settings) does not serve: the gateway's
    pages are not there, and its 404 page would name them."""
    return error_response(
        None, ProviderError(404, "not_found", f"No route {request.method} {request.path}")
    )


def server_error(request):
    return error_response(None, ProviderError(500, "server_error", "The sandbox failed"))
