"""The paid call, one pipeline for every way to pay:

    resolve -> quote -> authorize the payment -> call the provider -> settle and record.

Resolving finds the catalog endpoint for the caller's path and fills the provider's URL;
quoting prices the most the call can cost; the payment (calls.payment) authorizes that amount
in a short transaction of its own; the provider is called with no transaction open; then the
payment settles the price the answer shows (at most the quote) and records the call in one
more short transaction. A crash between the two leaves an authorization that expires, never a
charge without a call nor a call without a record.
"""

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from calls.answers import answer_defect, provider_data, provider_reason
from calls.payment import Call, CallRecord, Outcome, Payment
from calls.pricing import (
    endpoint_actual_price,
    endpoint_quote,
    relayed_tokens_price,
    usage_price,
)
from calls.streams import (
    DONE,
    EVENT_STREAM,
    EventSplitter,
    StreamMeter,
    comment,
    error_event,
    is_done,
    is_stream_request,
    is_usage_only,
    stream_request_body,
)
from calls.upstream import (
    UpstreamAuth,
    UpstreamFailure,
    UpstreamRequest,
    UpstreamResponse,
    UpstreamStream,
    build_url,
    upstream_call,
    upstream_open,
)
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
class StreamEnd:
    """How a relayed stream ended (completed, broken, interrupted by the caller) and what the
    call was settled at."""

    ending: str
    outcome: Outcome
    price_micros: int


@dataclass(frozen=True)
class CallStream:
    """A provider's event stream on its way to the caller. Iterating ``events`` relays it;
    closing it early (the caller went away) ends the call and settles it."""

    request_id: str
    quote_micros: int
    headers_ms: float  # until the provider's status and headers arrived
    events: Iterator[bytes]


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
    begun = _begin(request, payment, request_id, test_mode=test_mode)
    _database_connection_release(pooled_only=True)
    try:
        response = upstream_call(begun.upstream_request)
    except UpstreamFailure as failure:
        raise begun.failed(failure.message, timeout=failure.timeout) from None
    return _answered(begun, response)


def call_stream(
    *,
    request: CallInput,
    payment: Payment,
    request_id: str,
    trailer: Callable[[StreamEnd], dict],
    test_mode: bool = False,
) -> "CallResult | CallStream":
    """Call the endpoint with ``stream: true`` in the body and relay the provider's events.

    Everything up to the provider's first byte is call_execute's: refusals and failures raise
    alike, and an answer that is not an event stream (a provider that does not stream, or an
    error) comes back as a CallResult. Otherwise the CallStream's ``events`` relay the stream;
    the call is settled when it ends, however it ends (see calls.streams for the price), or, for
    a payment that settles before delivery (the rails), before the first event. Just before the
    provider's ``[DONE]`` the stream carries a comment with ``trailer``'s summary of the call.
    """
    begun = _begin(request, payment, request_id, test_mode=test_mode, streaming=True)
    try:
        upstream = upstream_open(begun.upstream_request)
    except UpstreamFailure as failure:
        raise begun.failed(failure.message, timeout=failure.timeout) from None
    if not (200 <= upstream.status < 300 and _media_type(upstream.content_type) == EVENT_STREAM):
        try:
            content = upstream.read()
        except UpstreamFailure as failure:
            raise begun.failed(failure.message, timeout=failure.timeout) from None
        finally:
            upstream.close()
        response = UpstreamResponse(
            status=upstream.status,
            content_type=upstream.content_type,
            content=content,
            elapsed_ms=begun.elapsed_ms(),
        )
        return _answered(begun, response)
    if payment.settles_before_delivery:
        try:
            begun.settle(Outcome.COMPLETED, begun.elapsed_ms(), begun.quote)
        except BaseException:
            upstream.close()
            raise
    _database_connection_release(pooled_only=False)
    return CallStream(
        request_id=request_id,
        quote_micros=begun.quote,
        headers_ms=upstream.headers_ms,
        events=_relay(begun, upstream, payment, trailer),
    )


@dataclass
class _Begun:
    """A call whose payment is authorized and whose provider request is ready."""

    call: Call
    request: CallInput
    payment: Payment
    started: datetime
    clock: float
    upstream_request: UpstreamRequest | None = None
    quote: int = 0

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.clock) * 1000

    def settle(self, outcome: Outcome, latency_ms: float, price_micros: int = 0) -> None:
        self.payment.settle(
            record=CallRecord(
                call=self.call,
                outcome=outcome,
                price_micros=price_micros,
                latency_ms=int(latency_ms),
                started_at=self.started,
            )
        )

    def failed(self, message: str, *, timeout: bool = False) -> UpstreamError:
        """The provider could not be reached or read: settled as failed, never charged."""
        elapsed_ms = self.elapsed_ms()
        self.settle(Outcome.FAILED, elapsed_ms)
        return UpstreamError(
            message,
            status=504 if timeout else 502,
            upstream_ms=elapsed_ms,
            extra={"data": None, "upstreamStatus": None, "requestId": self.call.request_id},
        )


def _begin(
    request: CallInput,
    payment: Payment,
    request_id: str,
    *,
    test_mode: bool,
    streaming: bool = False,
) -> _Begun:
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
    begun = _Begun(
        call=call,
        request=request,
        payment=payment,
        started=timezone.now(),
        clock=time.perf_counter(),
    )
    try:
        if is_stream_request(request.body) and not streaming:
            raise InvalidRequest(
                "This way of calling answers whole replies only: omit stream or set it to false"
            )
        sent = request
        if streaming and endpoint.price_kind == Endpoint.PriceKind.DYNAMIC:
            body, _ = stream_request_body(request.body)
            sent = replace(request, body=body)
        begun.upstream_request = _upstream_request(resolved, sent, test_mode=test_mode)
        begun.quote = endpoint_quote(endpoint=endpoint, query=request.query, body=request.body)
        payment.authorize(call=call, quote_micros=begun.quote)
    except ApiError:
        begun.settle(Outcome.REJECTED, 0)
        raise
    return begun


def _answered(begun: _Begun, response: UpstreamResponse) -> CallResult:
    """Settle a call from its provider's whole answer: charged if it is a usable 2xx."""
    endpoint, request_id = begun.call.endpoint, begun.call.request_id
    data = provider_data(response)
    if not 200 <= response.status < 300:
        begun.settle(Outcome.FAILED, response.elapsed_ms)
        raise UpstreamError(
            f"The provider answered {response.status}: {provider_reason(data)}",
            status=response.status if 400 <= response.status < 500 else 502,
            upstream_ms=response.elapsed_ms,
            extra={"data": data, "upstreamStatus": response.status, "requestId": request_id},
        )
    defect = answer_defect(endpoint=endpoint, response=response)
    if defect:
        # Not what the endpoint documents: an upstream failure, never charged, whatever the price.
        begun.settle(Outcome.FAILED, response.elapsed_ms)
        raise UpstreamError(
            f"The provider answered {response.status} with {defect}",
            status=502,
            upstream_ms=response.elapsed_ms,
            extra={"data": data, "upstreamStatus": response.status, "requestId": request_id},
        )
    price = endpoint_actual_price(endpoint=endpoint, quote_micros=begun.quote, response=data)
    begun.settle(Outcome.COMPLETED, response.elapsed_ms, price)
    return CallResult(
        request_id=request_id,
        data=data,
        quote_micros=begun.quote,
        price_micros=price,
        upstream_ms=response.elapsed_ms,
        status=response.status,
        content=response.content,
        content_type=response.content_type,
    )


def _relay(begun: _Begun, upstream: UpstreamStream, payment: Payment, trailer) -> Iterator[bytes]:
    """Relay the provider's events as they come and settle the call when the stream ends: after
    the provider's last event, when it breaks off, or when the caller goes away (the server
    closes this generator)."""
    _, caller_wants_usage = stream_request_body(begun.request.body)
    meter = StreamMeter()
    settled = payment.settles_before_delivery
    deadline = time.monotonic() + settings.UPSTREAM_STREAM_MAX_SECONDS

    def settle(ending: str) -> StreamEnd:
        nonlocal settled
        outcome, price = _stream_outcome(begun, meter, ending)
        if not settled:
            settled = True
            begun.settle(outcome, begun.elapsed_ms(), price)
        return StreamEnd(ending=ending, outcome=outcome, price_micros=price)

    try:
        ending, reason = "broken", "The provider ended the stream before its last event"
        splitter = EventSplitter()
        try:
            for chunk in upstream.chunks():
                # What one read brought goes out in one write: nothing waits for later bytes.
                relayed, done = _relayable(splitter.feed(chunk), meter, caller_wants_usage)
                if relayed:
                    yield relayed
                if done:
                    ending = "completed"
                    break
                if time.monotonic() > deadline:
                    reason = (
                        f"The stream was cut after {settings.UPSTREAM_STREAM_MAX_SECONDS:g} "
                        "seconds, the longest a stream may last"
                    )
                    break
            else:
                relayed, done = _relayable(splitter.end(), meter, caller_wants_usage)
                if relayed:
                    yield relayed
                if done or meter.usage is not None:
                    ending = "completed"  # the usage came; only the closing [DONE] did not
        except UpstreamFailure as failure:
            reason = failure.message
        end = settle(ending)
        if ending != "completed":
            yield error_event(reason)
        yield comment("gateway " + json.dumps(trailer(end), separators=(",", ":")))
        if ending == "completed":
            yield DONE
    except GeneratorExit:
        settle("interrupted")
        raise
    finally:
        upstream.close()


def _relayable(events: list[bytes], meter: StreamMeter, caller_wants_usage: bool):
    """The bytes of ``events`` to relay, up to the provider's [DONE], and whether it came."""
    relayed = []
    for event in events:
        if is_done(event):
            return b"".join(relayed), True
        chunk = meter.observe(event)
        if is_usage_only(chunk) and not caller_wants_usage:
            continue
        relayed.append(event)
    return b"".join(relayed), False


def _stream_outcome(begun: _Begun, meter: StreamMeter, ending: str) -> tuple[Outcome, int]:
    """How a stream that ended so is settled, and its price (see calls.streams)."""
    endpoint, quote = begun.call.endpoint, begun.quote
    if endpoint.price_kind != Endpoint.PriceKind.DYNAMIC:
        if ending != "completed":
            return Outcome.FAILED, 0
        return Outcome.COMPLETED, endpoint_actual_price(
            endpoint=endpoint, quote_micros=quote, response=None
        )
    reported = usage_price(endpoint=endpoint, usage=meter.usage)
    if reported is not None:
        return Outcome.COMPLETED, min(reported, quote)
    if not meter.relayed_output:
        return (Outcome.COMPLETED, 0) if ending == "completed" else (Outcome.FAILED, 0)
    return Outcome.COMPLETED, relayed_tokens_price(
        endpoint=endpoint,
        quote_micros=quote,
        body=begun.request.body,
        output_tokens=meter.relayed_output_tokens(),
    )


def call_lapse_seconds(*, streaming: bool) -> float:
    """The longest one call can take, its provider's answer or stream included, with a margin for
    the database around it: how long its slot of calls in flight (gateway.inflight) lasts if the
    worker dies before giving it back."""
    if streaming:
        return settings.UPSTREAM_STREAM_MAX_SECONDS + 30
    return settings.UPSTREAM_TIMEOUT_CAP_SECONDS + 30


def _database_connection_release(*, pooled_only: bool) -> None:
    """Hand the thread's database connection back while the provider works, so that threads
    waiting on slow providers or relaying streams do not hold connections the others need:
    settling takes one again. Pooled connections go back to the pool at no cost; a persistent
    one is closed only for a stream (minutes long), since reopening it costs a few ms."""
    pooled = bool(connection.settings_dict.get("OPTIONS", {}).get("pool"))
    if connection.in_atomic_block or (pooled_only and not pooled):
        return
    connection.close()


def _media_type(content_type: str) -> str:
    return content_type.split(";")[0].strip().lower()


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
        timeout_seconds=(
            min(api.timeout_seconds, settings.TEST_KEY_TIMEOUT_SECONDS)
            if test_mode
            else api.timeout_seconds
        ),
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


def _upstream_auth(api: ProviderApi) -> UpstreamAuth:
    if api.upstream_auth_type == ProviderApi.AuthType.NONE:
        return UpstreamAuth()
    return UpstreamAuth(
        type=api.upstream_auth_type,
        name=api.upstream_auth_name,
        secret=provider_api_upstream_secret(api=api),
    )
