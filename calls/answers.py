"""A provider's answer as the caller receives it: its JSON unmodified where it can be, and the
provider's own words for a failure."""

import base64
import json
from typing import Any

from calls.upstream import UpstreamResponse
from catalog.models import Endpoint
from gateway.parsers import json_depth_exceeds

PROVIDER_REASON_KEYS = ("error", "message", "detail", "error_description", "errors")
MAX_PROVIDER_JSON_DEPTH = 256
MAX_REASON_CHARS = 300
# Statuses that carry no content by definition, or may announce an action's result without any
# (a job accepted, a resource created at its Location).
STATUSES_WITHOUT_CONTENT = frozenset({201, 202, 204, 205})
# Methods whose success is the act itself: an empty answer is what many providers send.
METHODS_WITHOUT_CONTENT = frozenset({"HEAD", "OPTIONS", "DELETE"})
# Prices read from the answer's JSON: these endpoints document a JSON answer.
PRICES_READ_FROM_JSON = frozenset({Endpoint.PriceKind.PER_RESULT, Endpoint.PriceKind.DYNAMIC})


def _media_type(response: UpstreamResponse) -> str:
    return response.content_type.split(";")[0].strip().lower()


def _is_json_media_type(media_type: str) -> bool:
    return media_type == "application/json" or media_type.endswith("+json")


def answer_defect(*, endpoint: Endpoint, response: UpstreamResponse) -> str | None:
    """What makes a provider's 2xx unusable, or None when it is what the endpoint documents.

    The catalog documents content for every answer except a HEAD, OPTIONS or DELETE and a 201,
    202, 204 or 205; it documents JSON for an endpoint priced from its answer (per result,
    dynamic) and for any answer the provider labels as JSON. Text and binary answers of other
    endpoints are content like any other.
    """
    if endpoint.method == "HEAD" or response.status in (204, 205):
        return None
    json_documented = endpoint.price_kind in PRICES_READ_FROM_JSON
    if not response.content:
        content_optional = (
            endpoint.method in METHODS_WITHOUT_CONTENT
            or response.status in STATUSES_WITHOUT_CONTENT
        )
        return None if content_optional and not json_documented else "an empty body"
    if not (json_documented or _is_json_media_type(_media_type(response))):
        return None
    try:
        json.loads(response.content)
    except RecursionError:
        return None  # JSON nested past the parser's reach: passed on as text (provider_data)
    except ValueError:
        return "a body that is not valid JSON"
    return None


def provider_data(response: UpstreamResponse) -> Any:
    """The provider's JSON unmodified; other text (and JSON nested past
    MAX_PROVIDER_JSON_DEPTH) as a string; binary as base64."""
    content_type = _media_type(response)
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


def provider_reason(data: Any) -> str:
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
    return (reason or "no reason given")[:MAX_REASON_CHARS]
