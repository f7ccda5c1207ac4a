"""The paid call, one pipeline for every way to pay:

    resolve -> quote -> authorize the payment -> call the provider -> settle and record.

Resolving finds the catalog endpoint for the caller's path and fills the provider's URL;
quoting prices the most the call can cost; the payment (calls.payment) authorizes that amount
in a short transaction of its own; the provider is called with no transaction open; then the
payment settles the price the answer shows (at most the quote) and records the call in one
more short transaction. A crash between the two leaves an authorization that expires, never a
charge without a call nor a call without a record.
"""

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.utils import timezone

from calls.answers import answer_defect, provider_data, provider_reason
from calls.payment import Call, CallRecord, Outcome, Payment
from calls.pricing import endpoint_actual_price, endpoint_quote
from calls.upstream import UpstreamAuth, UpstreamFailure, UpstreamRequest, build_url, upstream_call
from catalog.models import Endpoint, ProviderApi
from catalog.paths import (
    caller_path_check,
    matched_values,
    multi_segment_placeholders,
    template_fill_values,
    template_placeholders,
)
from catalog.requirements import endpoint_requirements_check
from catalog.selectors import ResolvedEndpoint, endpoint_resolve, provider_api_upstream_secret
from gateway.errors import ApiError, Forbidden, InvalidRequest, UpstreamError

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


@dataclass(frozen=True)
class CallInput:
    """What a caller asks of a provider endpoint, whichever way it pays."""

    api: str
    path: str
    method: str | None = None
    query: dict = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    path_params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class CallResult:
    request_id: str
    data: Any  # the provider's answer (calls.answers.provider_data)
    quote_micros: int
    price_micros: int  # the price the answer shows; what is charged is the payment's decision
    upstream_ms: float
    status: int = 200  # the provider's own status, body and content type, for answers that
    content: bytes = b""  # pass it on unmodified (the rails)
    content_type: str = ""


def call_execute(
    *, request: CallInput, payment: Payment, request_id: str, test_mode: bool = False
) -> CallResult:
    """Call the endpoint ``request`` names and have ``payment`` pay for it.

    ``test_mode`` sends the call to the API's sandbox (as LIVE_CALLS_USE_SANDBOX does for every
    call). Refusals raise ApiError: unknown endpoints before anything is recorded, anything
    later once the payment has recorded the call as rejected. A provider that fails, or cannot
    be reached, raises UpstreamError after the payment has released the call.
    """
    caller_path_check(request.path)
    resolved = endpoint_resolve(api_slug=request.api, path=request.path, method=request.method)
    endpoint = resolved.endpoint
    call = Call(
        request_id=request_id,
        endpoint=endpoint,
        query=request.query,
        body=request.body,
        path_params=request.path_params,
        polled=resolved.polled,
    )
    started = timezone.now()

    def settle(outcome: Outcome, latency_ms: float, price_micros: int = 0) -> None:
        payment.settle(
            record=CallRecord(
                call=call,
                outcome=outcome,
                price_micros=price_micros,
                latency_ms=int(latency_ms),
                started_at=started,
            )
        )

    try:
        upstream_request = _upstream_request(resolved, request, test_mode=test_mode)
        quote = endpoint_quote(endpoint=endpoint, query=request.query, body=request.body)
        payment.authorize(call=call, quote_micros=quote)
    except ApiError:
        settle(Outcome.REJECTED, 0)
        raise

    try:
        response = upstream_call(upstream_request)
    except UpstreamFailure as failure:
        elapsed_ms = (timezone.now() - started).total_seconds() * 1000
        settle(Outcome.FAILED, elapsed_ms)
        raise UpstreamError(
            failure.message,
            status=504 if failure.timeout else 502,
            upstream_ms=elapsed_ms,
            extra={"data": None, "upstreamStatus": None, "requestId": request_id},
        ) from None

    data = provider_data(response)
    if not 200 <= response.status < 300:
        settle(Outcome.FAILED, response.elapsed_ms)
        raise UpstreamError(
            f"The provider answered {response.status}: {provider_reason(data)}",
            status=response.status if 400 <= response.status < 500 else 502,
            upstream_ms=response.elapsed_ms,
            extra={"data": data, "upstreamStatus": response.status, "requestId": request_id},
        )
    defect = answer_defect(endpoint=endpoint, response=response)
    if defect:
        # Not what the endpoint documents: an upstream failure, never charged, whatever the price.
        settle(Outcome.FAILED, response.elapsed_ms)
        raise UpstreamError(
            f"The provider answered {response.status} with {defect}",
            status=502,
            upstream_ms=response.elapsed_ms,
            extra={"data": data, "upstreamStatus": response.status, "requestId": request_id},
        )

    price = endpoint_actual_price(endpoint=endpoint, quote_micros=quote, response=data)
    settle(Outcome.COMPLETED, response.elapsed_ms, price)
    return CallResult(
        request_id=request_id,
        data=data,
        quote_micros=quote,
        price_micros=price,
        upstream_ms=response.elapsed_ms,
        status=response.status,
        content=response.content,
        content_type=response.content_type,
    )


def _upstream_request(
    resolved: ResolvedEndpoint, request: CallInput, *, test_mode: bool
) -> UpstreamRequest:
    """The provider request for a resolved call, its inputs checked against the catalog."""
    endpoint, api = resolved.endpoint, resolved.api
    _path_params_check(endpoint, request.path_params)
    values = matched_values(resolved.path_params)
    values.update(request.path_params)
    path = template_fill_values(
        endpoint.path, values, multi_segment_placeholders(endpoint.path_params)
    )
    url = build_url(_base_url(api, test_mode=test_mode), path)
    body_encoding = _body_encoding(endpoint)
    _inputs_check(endpoint, request, body_encoding)
    return UpstreamRequest(
        method=endpoint.method,
        url=url,
        query=request.query,
        body=request.body,
        has_body=request.has_body,
        body_encoding=body_encoding,
        auth=_upstream_auth(api),
        timeout_seconds=api.timeout_seconds,
        allow_private_network=_is_sandbox(url) or settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS,
    )


def _path_params_check(endpoint: Endpoint, path_params: dict) -> None:
    """A misspelt name would otherwise be dropped and the template's own text sent instead."""
    names = template_placeholders(endpoint.path)
    unknown = [name for name in path_params if name not in names]
    if unknown:
        takes = ", ".join(names) if names else "no path parameters"
        raise InvalidRequest(
            "; ".join(f"pathParams.{name}: unknown path parameter" for name in unknown)
            + f"; {endpoint.path} takes {takes}"
        )


def _base_url(api: ProviderApi, *, test_mode: bool) -> str:
    if test_mode or settings.LIVE_CALLS_USE_SANDBOX:
        if not api.sandbox_base_url:
            raise Forbidden(
                f"API {api.slug} has no sandbox, so test keys cannot call it; use a live key"
                if test_mode
                else f"API {api.slug} has no sandbox to serve live calls in this deployment"
            )
        return api.sandbox_base_url
    return api.base_url


def _is_sandbox(url: str) -> bool:
    return url.startswith(settings.SANDBOX_BASE_URL.rstrip("/") + "/")


def _body_encoding(endpoint: Endpoint) -> str:
    content_type = endpoint.body_content_type
    if content_type == FORM_CONTENT_TYPE:
        return "form"
    if content_type.startswith("multipart/"):
        return "multipart"
    return "json"


def _inputs_check(endpoint: Endpoint, request: CallInput, body_encoding: str) -> None:
    if request.has_body and not endpoint.takes_body:
        raise InvalidRequest(
            f"{endpoint.method} {endpoint.path} takes no body; send its inputs in query"
        )
    for name, value in request.query.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str | int | float | bool) for item in values):
            raise InvalidRequest(
                f"query.{name} must be a string, number, boolean or a list of them"
            )
    missing = [
        f"query.{param['name']}"
        for param in endpoint.query_params
        if param.get("required") and param["name"] not in request.query
    ]
    if endpoint.takes_body:
        body = request.body if isinstance(request.body, dict) else {}
        missing += [
            f"body.{param['name']}"
            for param in endpoint.body_params
            if param.get("required") and param["name"] not in body
        ]
        if request.has_body and body_encoding != "json" and not isinstance(request.body, dict):
            raise InvalidRequest(
                f"{endpoint.method} {endpoint.path} takes a form: send body as a JSON object"
            )
    if missing:
        raise InvalidRequest(f"Missing required parameters: {', '.join(missing)}")
    endpoint_requirements_check(endpoint=endpoint, query=request.query, body=request.body)
    if isinstance(request.body, dict) and request.body.get("stream") is True:
        raise InvalidRequest("Streaming answers are not served yet; omit stream or set it to false")


def _upstream_auth(api: ProviderApi) -> UpstreamAuth:
    if api.upstream_auth_type == ProviderApi.AuthType.NONE:
        return UpstreamAuth()
    return UpstreamAuth(
        type=api.upstream_auth_type,
        name=api.upstream_auth_name,
        secret=provider_api_upstream_secret(api=api),
    )
