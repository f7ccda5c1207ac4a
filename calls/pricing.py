"""What a call costs: the quote reserved before the provider is called, and the actual price
captured after. The actual price never exceeds the quote, so a hold always covers it.
"""

import json
import logging
import math
from typing import Any

from catalog.models import Endpoint
from catalog.prices import documented_default_results
from gateway.errors import InvalidRequest
from gateway.inputs import ASCII_INTEGER

logger = logging.getLogger("calls.pricing")

DEFAULT_MAX_RESULTS = 100
DEFAULT_MAX_OUTPUT_TOKENS = 4096
# Input tokens are estimated generously (about 3 characters a token, plus a per-message
# overhead and a fixed allowance per non-text part) so the hold covers the real count.
CHARACTERS_PER_TOKEN = 3
TOKENS_PER_MESSAGE = 8
TOKENS_PER_MEDIA_PART = 1500
MICROS_PER_TOKEN_UNIT = 1_000_000


def _request_value(name: str, query: dict, body: Any) -> tuple[str, Any]:
    """Where the request holds ``name`` ("query.limit"), and its value (None when absent)."""
    if name in query:
        return f"query.{name}", query[name]
    if isinstance(body, dict) and name in body:
        return f"body.{name}", body[name]
    return name, None


def _positive_int(name: str, value) -> int:
    """At least 1: a bound of 0 would quote nothing for a provider that reads 0 as its default."""
    # ASCII digits only: int() also reads "1_000" and other scripts' digits, which the
    # provider, reading the value as sent, may not.
    if isinstance(value, bool) or not ASCII_INTEGER.fullmatch(str(value)):
        raise InvalidRequest(f"{name} must be a positive integer")
    number = int(str(value))
    if number < 1:
        raise InvalidRequest(f"{name} must be a positive integer")
    return number


def quoted_result_count(*, endpoint: Endpoint, query: dict, body: Any) -> int:
    """The results a call is quoted for: the bound the request sets, else the provider's
    documented default for it (Hunter returns 10 addresses when limit is left out), else the
    endpoint's maximum; never more than the maximum."""
    ceiling = endpoint.result_max or DEFAULT_MAX_RESULTS
    if not endpoint.result_bound_param:
        return ceiling
    where, value = _request_value(endpoint.result_bound_param, query, body)
    if value is None:
        return min(documented_default_results(endpoint=endpoint) or ceiling, ceiling)
    return min(_positive_int(where, value), ceiling)


def _text_tokens(text) -> int:
    return math.ceil(len(str(text)) / CHARACTERS_PER_TOKEN)


def estimated_input_tokens(body: dict) -> int:
    """Chat ``messages``, or the ``input`` / ``prompt`` of embedding and completion APIs."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        other = body.get("input", body.get("prompt", ""))
        items = other if isinstance(other, list) else [other]
        return TOKENS_PER_MESSAGE + sum(_text_tokens(item) for item in items)
    tokens = 0
    for message in messages:
        tokens += TOKENS_PER_MESSAGE
        content = message.get("content") if isinstance(message, dict) else message
        parts = content if isinstance(content, list) else [content]
        for part in parts:
            if isinstance(part, str):
                tokens += _text_tokens(part)
            elif isinstance(part, dict) and part.get("type") == "text":
                tokens += _text_tokens(part.get("text", ""))
            elif part is not None:
                tokens += TOKENS_PER_MEDIA_PART
        if isinstance(message, dict) and message.get("tool_calls"):
            tokens += _text_tokens(json.dumps(message["tool_calls"]))
    if body.get("tools"):
        tokens += _text_tokens(json.dumps(body["tools"]))
    return tokens


def _token_price(input_tokens: int, output_tokens: int, endpoint: Endpoint) -> int:
    total = (
        input_tokens * endpoint.input_micros_per_mtok
        + output_tokens * endpoint.output_micros_per_mtok
    )
    return -(-total // MICROS_PER_TOKEN_UNIT)  # round a fraction of a micro-dollar up


def endpoint_quote(*, endpoint: Endpoint, query: dict, body: Any) -> int:
    """The most this call can cost, in micro-dollars."""
    kind = endpoint.price_kind
    if kind == Endpoint.PriceKind.FREE:
        return 0
    if kind == Endpoint.PriceKind.FIXED:
        return endpoint.price_micros
    if kind == Endpoint.PriceKind.PER_RESULT:
        return endpoint.price_micros * quoted_result_count(
            endpoint=endpoint, query=query, body=body
        )
    body = body if isinstance(body, dict) else {}
    where, requested = _request_value("max_tokens", {}, body)
    if requested is None:
        where, requested = _request_value("max_completion_tokens", {}, body)
    if requested is None:  # a catalog default of 0 would quote no output: unset, like result_max
        output_tokens = endpoint.default_max_tokens or DEFAULT_MAX_OUTPUT_TOKENS
    else:
        output_tokens = _positive_int(where, requested)
    return _token_price(estimated_input_tokens(body), output_tokens, endpoint)


def _at_path(document: Any, dotted: str):
    value = document
    for part in dotted.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def counted_results(*, endpoint: Endpoint, response: Any) -> int | None:
    found = _at_path(response, endpoint.result_count_path)
    if isinstance(found, list):
        return len(found)
    if isinstance(found, int) and not isinstance(found, bool) and found >= 0:
        return found
    return None


def endpoint_actual_price(*, endpoint: Endpoint, quote_micros: int, response: Any) -> int:
    """The price of a successful call from the provider's answer; at most the quote."""
    kind = endpoint.price_kind
    if kind in (Endpoint.PriceKind.FREE, Endpoint.PriceKind.FIXED):
        return quote_micros
    if kind == Endpoint.PriceKind.PER_RESULT:
        count = counted_results(endpoint=endpoint, response=response)
        if count is None:
            # Never guess in the provider's favour: an answer without its count (or, below,
            # without its token usage) costs nothing.
            logger.warning("No result count at %r for %s", endpoint.result_count_path, endpoint)
            return 0
        return min(endpoint.price_micros * count, quote_micros)
    usage = response.get("usage") if isinstance(response, dict) else None
    price = usage_price(endpoint=endpoint, usage=usage)
    if price is None:
        logger.warning("No token usage in the answer of %s", endpoint)
        return 0
    return min(price, quote_micros)


def usage_price(*, endpoint: Endpoint, usage: Any) -> int | None:
    """The price of the tokens a provider reports (None when ``usage`` is not a usage object)."""
    if not isinstance(usage, dict):
        return None
    input_tokens = usage.get("prompt_tokens") or usage.get("input_tokens") or 0
    output_tokens = usage.get("completion_tokens") or usage.get("output_tokens") or 0
    counts = (input_tokens, output_tokens)
    if not all(isinstance(count, int) and not isinstance(count, bool) for count in counts):
        return None
    return _token_price(max(input_tokens, 0), max(output_tokens, 0), endpoint)


def relayed_tokens_price(
    *, endpoint: Endpoint, quote_micros: int, body: Any, output_tokens: int
) -> int:
    """The price of a token-priced stream that ended without the provider's usage: the input
    estimate its hold was reserved on, plus the output relayed; at most the quote."""
    body = body if isinstance(body, dict) else {}
    return min(_token_price(estimated_input_tokens(body), output_tokens, endpoint), quote_micros)
