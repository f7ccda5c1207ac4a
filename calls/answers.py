"""A provider's answer as the caller receives it: its JSON unmodified where it can be, and the
provider's own words for a failure."""

import base64
import json
from typing import Any

from calls.upstream import UpstreamResponse
from gateway.parsers import json_depth_exceeds

PROVIDER_REASON_KEYS = ("error", "message", "detail", "error_description", "errors")
MAX_PROVIDER_JSON_DEPTH = 256
MAX_REASON_CHARS = 300


def provider_data(response: UpstreamResponse) -> Any:
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
