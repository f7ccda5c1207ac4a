"""POST /v1/run: quote -> reserve -> call the provider -> settle, charging exactly once.

The reservation and the settlement are two short transactions; the provider is called with no
transaction open. A crash between them leaves a pending hold that expires and is given back,
never a charge without a call.
"""

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.utils import timezone

from catalog.models import Endpoint, ProviderApi
from catalog.openapi import PLACEHOLDER
from catalog.selectors import (
    endpoint_multi_segment_params,
    endpoint_resolve,
    provider_api_upstream_secret,
)
from credits.models import UsageEvent
from credits.services import (
    account_id_for_owner,
    hold_capture,
    hold_release,
    hold_reserve,
    usage_event_new,
)
from gateway.errors import ApiError, Forbidden, InvalidRequest, UpstreamError
from gateway.money import micros_to_cents
from gateway.parsers import json_depth_exceeds
from gateway.pricing import endpoint_actual_price, endpoint_quote
from gateway.selectors import KeyPrincipal
from gateway.upstream import (
    UpstreamAuth,
    UpstreamFailure,
    UpstreamRequest,
    UpstreamResponse,
    build_url,
    check_caller_path,
    encode_path_param,
    upstream_call,
)

CONTINUATION_WINDOW = timedelta(hours=24)
PROVIDER_REASON_KEYS = ("error", "message", "detail", "error_description", "errors")
MAX_PROVIDER_JSON_DEPTH = 256


def new_request_id() -> str:
    return f"run_{int(time.time() * 1000)}_{secrets.token_hex(6)}"


@dataclass
class RunInput:
    api: str
    path: str
    query: dict = field(default_factory=dict)
    body: Any = None
    has_body: bool = False
    path_params: dict = field(default_factory=dict)
    parent_request_id: str | None = None
    method: str | None = None


@dataclass
class RunResult:
    status: int
    body: dict
    upstream_ms: float = 0.0


@dataclass
class _Billing:
    quote_micros: int
    charge: bool  # reserve and capture (live key, priced, not a continuation or a poll)
    fingerprint: str
    root_request_id: str = ""
    parent_request_id: str | None = None


def run_execute(*, principal: KeyPrincipal, run: RunInput, request_id: str) -> RunResult:
    check_caller_path(run.path)
    resolved = endpoint_resolve(api_slug=run.api, path=run.path, method=run.method)
    endpoint, api = resolved.endpoint, resolved.api
    account_id = account_id_for_owner(
        user_id=principal.user_id, organization_id=principal.organization_id
    )
    started = timezone.now()

    def usage(status: str, cost_micros: int, billing: _Billing | None, latency_ms: float = 0):
        return usage_event_new(
            account_id=account_id,
            api_key_id=principal.key_id,
            request_id=request_id,
            api_slug=api.slug,
            path=endpoint.path,
            method=endpoint.method,
            status=status,
            mode=principal.mode,
            cost_micros=cost_micros,
            latency_ms=int(latency_ms),
            created_at=started,
            endpoint_id=endpoint.pk,
            params_fingerprint=billing.fingerprint if billing else "",
            billing_root_request_id=billing.root_request_id if billing else "",
        )

    billing = hold = None
    try:
        url = build_url(
            _base_url(api, principal), _concrete_path(endpoint, resolved.path_params, run)
        )
        _check_inputs(endpoint, run)
        billing = _billing(
            endpoint=endpoint,
            run=run,
            principal=principal,
            account_id=account_id,
            request_id=request_id,
            polled=resolved.polled,
        )
        if billing.charge:
            hold = hold_reserve(
                account=account_id,
                amount_micros=billing.quote_micros,
                request_id=request_id,
                description=f"{api.slug} {endpoint.method} {endpoint.path}",
                metadata={"api": api.slug, "path": endpoint.path, "method": endpoint.method},
            )
    except ApiError:
        usage(UsageEvent.Status.REJECTED, 0, billing).save(force_insert=True)
        raise

    def fail(latency_ms: float):
        event = usage(UsageEvent.Status.FAILED, 0, billing, latency_ms)
        if hold is not None:
            hold_release(hold=hold, also_record=event)
        else:
            event.save(force_insert=True)

    try:
        response = upstream_call(
            UpstreamRequest(
                method=endpoint.method,
                url=url,
                query=run.query,
                body=run.body,
                has_body=run.has_body,
                body_encoding=_body_encoding(endpoint),
                auth=_upstream_auth(api),
                timeout_seconds=api.timeout_seconds,
                allow_private_network=_is_sandbox(url) or settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS,
            )
        )
    except UpstreamFailure as failure:
        fail(_elapsed_ms(started))
        raise UpstreamError(
            failure.message,
            status=504 if failure.timeout else 502,
            upstream_ms=_elapsed_ms(started),
            extra={"data": None, "upstreamStatus": None, "requestId": request_id},
        ) from None

    data = decode_provider_body(response)
    if not 200 <= response.status < 300:
        fail(response.elapsed_ms)
        raise UpstreamError(
            f"The provider answered {response.status}: {provider_reason(data, response)}",
            status=response.status if 400 <= response.status < 500 else 502,
            upstream_ms=response.elapsed_ms,
            extra={"data": data, "upstreamStatus": response.status, "requestId": request_id},
        )

    price = endpoint_actual_price(
        endpoint=endpoint, quote_micros=billing.quote_micros, response=data
    )
    event = usage(UsageEvent.Status.COMPLETED, price if hold else 0, billing, response.elapsed_ms)
    if hold is not None:
        hold_capture(
            hold=hold,
            amount_micros=price,
            provider_account=_provider_account_id(api),
            description=f"{api.slug} {endpoint.method} {endpoint.path}",
            also_record=event,
        )
    else:
        event.save(force_insert=True)
    if billing.parent_request_id:
        price_shown = billing.quote_micros
        billing_body = {
            "requestId": request_id,
            "parentRequestId": billing.parent_request_id,
            "charged": False,
        }
    else:
        price_shown = price
        billing_body = {"requestId": request_id, "charged": hold is not None and price > 0}
    return RunResult(
        status=200,
        body={
            "success": True,
            "priceCents": micros_to_cents(price_shown),
            "data": data,
            "requestId": request_id,
            "billing": billing_body,
        },
        upstream_ms=response.elapsed_ms,
    )


def _elapsed_ms(started) -> float:
    return (timezone.now() - started).total_seconds() * 1000


def _base_url(api: ProviderApi, principal: KeyPrincipal) -> str:
    if principal.is_test or settings.LIVE_CALLS_USE_SANDBOX:
        if not api.sandbox_base_url:
            raise Forbidden(
                f"API {api.slug} has no sandbox, so test keys cannot call it; use a live key"
                if principal.is_test
                else f"API {api.slug} has no sandbox to serve live calls in this deployment"
            )
        return api.sandbox_base_url
    return api.base_url


def _is_sandbox(url: str) -> bool:
    return url.startswith(settings.SANDBOX_BASE_URL.rstrip("/") + "/")


def _concrete_path(endpoint: Endpoint, resolved_params: dict, run: RunInput) -> str:
    if not isinstance(run.path_params, dict):
        raise InvalidRequest("pathParams must be an object")
    # A concrete path is a URL path: "Jane%20Doe" and "Jane Doe" are one value, encoded once for
    # the provider. pathParams are values as they are.
    values = {name: unquote(value) for name, value in resolved_params.items()}
    values.update(run.path_params)
    missing = [name for name in PLACEHOLDER.findall(endpoint.path) if name not in values]
    if missing:
        raise InvalidRequest(
            f"Fill the placeholders of {endpoint.path}: "
            + ", ".join(f"{{{name}}}" for name in missing)
            + " (send a concrete path or pathParams)"
        )
    multi_segment = endpoint_multi_segment_params(endpoint)
    return PLACEHOLDER.sub(
        lambda match: encode_path_param(
            match.group(1), values[match.group(1)], multi_segment=match.group(1) in multi_segment
        ),
        endpoint.path,
    )


def _check_inputs(endpoint: Endpoint, run: RunInput) -> None:
    if run.has_body and not endpoint.takes_body:
        raise InvalidRequest(
            f"{endpoint.method} {endpoint.path} takes no body; send its inputs in query"
        )
    for name, value in run.query.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str | int | float | bool) for item in values):
            raise InvalidRequest(
                f"query.{name} must be a string, number, boolean or a list of them"
            )
    missing = [
        f"query.{param['name']}"
        for param in endpoint.query_params
        if param.get("required") and param["name"] not in run.query
    ]
    if endpoint.takes_body:
        body = run.body if isinstance(run.body, dict) else {}
        missing += [
            f"body.{param['name']}"
            for param in endpoint.body_params
            if param.get("required") and param["name"] not in body
        ]
        if run.has_body and _body_encoding(endpoint) != "json" and not isinstance(run.body, dict):
            raise InvalidRequest(
                f"{endpoint.method} {endpoint.path} takes a form: send body as a JSON object"
            )
    if missing:
        raise InvalidRequest(f"Missing required parameters: {', '.join(missing)}")
    if isinstance(run.body, dict) and run.body.get("stream") is True:
        raise InvalidRequest(
            "Streaming is served on the pay-per-call rails, not by /v1/run; omit stream or "
            "set it to false"
        )


def _body_encoding(endpoint: Endpoint) -> str:
    content_type = endpoint.body_content_type
    if content_type == "application/x-www-form-urlencoded":
        return "form"
    if content_type.startswith("multipart/"):
        return "multipart"
    return "json"


def _fingerprint(endpoint: Endpoint, run: RunInput) -> str:
    paging = set(endpoint.pagination_params or [])
    body = run.body
    if isinstance(body, dict):
        body = {name: value for name, value in body.items() if name not in paging}
    identity = {
        "query": {name: value for name, value in run.query.items() if name not in paging},
        "body": body,
        "pathParams": {name: v for name, v in run.path_params.items() if name not in paging},
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def _billing(
    *,
    endpoint: Endpoint,
    run: RunInput,
    principal: KeyPrincipal,
    account_id: int,
    request_id: str,
    polled: bool,
) -> _Billing:
    quote = endpoint_quote(endpoint=endpoint, query=run.query, body=run.body)
    fingerprint = _fingerprint(endpoint, run)
    billing = _Billing(
        quote_micros=quote, charge=not principal.is_test and quote > 0, fingerprint=fingerprint
    )
    if run.parent_request_id:
        root = _continued_request(account_id=account_id, parent_id=run.parent_request_id)
        if (
            root is not None
            and root.endpoint_id == endpoint.pk
            and root.params_fingerprint == fingerprint
            and root.created_at >= timezone.now() - CONTINUATION_WINDOW
        ):
            billing.charge = False
            billing.parent_request_id = run.parent_request_id
            billing.root_request_id = root.request_id
            return billing
    if polled:
        billing.charge = False  # polling an asynchronous job is free; starting it was charged
    if billing.charge:
        billing.root_request_id = request_id
    return billing


def _continued_request(*, account_id: int, parent_id: str) -> UsageEvent | None:
    """The charged first page a parentRequestId continues, or None when it was not charged."""
    parent = UsageEvent.objects.filter(request_id=parent_id).first()
    if parent is None or parent.account_id != account_id:
        raise InvalidRequest(f"parentRequestId {parent_id} is not a request of this account")
    root_id = parent.billing_root_request_id
    if not root_id:
        return None
    root = (
        parent
        if root_id == parent.request_id
        else (UsageEvent.objects.filter(request_id=root_id, account_id=account_id).first())
    )
    if root is None or root.status != UsageEvent.Status.COMPLETED or root.cost_micros <= 0:
        return None
    return root


def _upstream_auth(api: ProviderApi) -> UpstreamAuth:
    if api.upstream_auth_type == ProviderApi.AuthType.NONE:
        return UpstreamAuth()
    return UpstreamAuth(
        type=api.upstream_auth_type,
        name=api.upstream_auth_name,
        secret=provider_api_upstream_secret(api=api),
    )


def _provider_account_id(api: ProviderApi) -> int | None:
    if api.owner_id is None:
        return None
    return account_id_for_owner(user_id=None, organization_id=api.owner_id)


def decode_provider_body(response: UpstreamResponse) -> Any:
    """The provider's JSON unmodified; other text (and JSON nested past
    MAX_PROVIDER_JSON_DEPTH) as a string; binary as base64."""
    content_type = response.content_type.split(";")[0].strip().lower()
    if not response.content:
        return None
    if content_type.endswith("json") or content_type.endswith("+json") or not content_type:
        try:
            data = json.loads(response.content)
        except (ValueError, RecursionError):
            pass
        else:
            # Nested deeper, the answer could not be rendered back: it goes on as its text. Each
            # level opens a bracket, so an answer with few of them is not walked at all.
            content = response.content
            if content.count(b"[") + content.count(b"{") <= MAX_PROVIDER_JSON_DEPTH:
                return data
            if not json_depth_exceeds(data, MAX_PROVIDER_JSON_DEPTH):
                return data
    if content_type.startswith("text/") or content_type.endswith(("xml", "json", "javascript")):
        try:
            return response.content.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return {
        "contentType": content_type or "application/octet-stream",
        "encoding": "base64",
        "content": base64.b64encode(response.content).decode(),
    }


def provider_reason(data: Any, response: UpstreamResponse) -> str:
    """The provider's own words for a failure, kept short."""
    reason = None
    if isinstance(data, dict):
        for key in PROVIDER_REASON_KEYS:
            value = data.get(key)
            if isinstance(value, list) and value:
                value = value[0]
            if isinstance(value, dict):
                value = value.get("message") or value.get("detail") or json.dumps(value)
            if value:
                reason = str(value)
                break
    elif isinstance(data, str) and data.strip():
        reason = data.strip()
    return (reason or "no reason given")[:300]
