"""How a price reads at the edge. Inside, prices are integer micro-dollars (see Endpoint).

list-endpoints, details and integrate: "$0.01", "$0.00" (free), "$0.0025" (per result) or
"dynamic". search: the same amounts without "$" ("0.01", "0", "0.0025") or "dynamic".
``priceUnit`` says what the amount is for: "call", "result" or "token" (dynamic).
"""

from typing import Any

from gateway.money import format_usd, micros_to_decimal_usd

FIXED, FREE, PER_RESULT, DYNAMIC = "fixed", "free", "per_result", "dynamic"
PRICE_UNITS = {FIXED: "call", FREE: "call", PER_RESULT: "result", DYNAMIC: "token"}


def price_label(*, kind: str, micros: int) -> str:
    """The list/details/integrate form: "$0.01", "$0.00", "$0.0025" or "dynamic"."""
    if kind == DYNAMIC:
        return "dynamic"
    return format_usd(0 if kind == FREE else micros)


def price_search_label(*, kind: str, micros: int) -> str:
    """The search form: "0.01", "0", "0.0025" or "dynamic"."""
    if kind == DYNAMIC:
        return "dynamic"
    if kind == FREE or micros == 0:
        return "0"
    return micros_to_decimal_usd(micros)


def price_unit(*, kind: str) -> str:
    return PRICE_UNITS[kind]


def price_text(*, kind: str, micros: int) -> str:
    """For people (the dashboard): the label with what it is for: "$0.01 per call", "$0.0025 per
    result", "free" or "dynamic, per token"."""
    if kind == DYNAMIC:
        return "dynamic, per token"
    if kind == FREE or micros == 0:
        return "free"
    return f"{price_label(kind=kind, micros=micros)} per {price_unit(kind=kind)}"


def endpoint_price_label(endpoint: Any) -> str:
    return price_label(kind=endpoint.price_kind, micros=endpoint.price_micros)


def endpoint_price_text(endpoint: Any) -> str:
    return price_text(kind=endpoint.price_kind, micros=endpoint.price_micros)


def endpoint_price_search_label(endpoint: Any) -> str:
    return price_search_label(kind=endpoint.price_kind, micros=endpoint.price_micros)


def documented_default_results(*, endpoint: Any) -> int | None:
    """The documented default of the parameter that bounds the results, when it is a positive
    whole number (a default of 0 often means "the provider's own choice": not a bound)."""
    name = endpoint.result_bound_param
    for param in (*endpoint.query_params, *endpoint.body_params):
        if param.get("name") == name:
            default = param.get("default")
            if isinstance(default, int) and not isinstance(default, bool) and default > 0:
                return default
            return None
    return None


def endpoint_price_detail(endpoint: Any) -> str:
    """One sentence for people: what a call costs and how it is counted."""
    kind = endpoint.price_kind
    if kind == FREE or (kind == FIXED and endpoint.price_micros == 0):
        return "free"
    if kind == FIXED:
        return f"{format_usd(endpoint.price_micros)} per call"
    if kind == PER_RESULT:
        text = (
            f"{format_usd(endpoint.price_micros)} per result, counted at "
            f"{endpoint.result_count_path} in the response"
        )
        if endpoint.result_bound_param:
            text += f"; the {endpoint.result_bound_param} parameter bounds the results"
            default = documented_default_results(endpoint=endpoint)
            if default and (not endpoint.result_max or default < endpoint.result_max):
                text += f" ({default}, the provider's default, quoted when it is not given"
                text += f"; at most {endpoint.result_max})" if endpoint.result_max else ")"
                return text
        if endpoint.result_max:
            text += f" (at most {endpoint.result_max} quoted when it is not given)"
        return text
    text = (
        f"{format_usd(endpoint.input_micros_per_mtok)} per million input tokens and "
        f"{format_usd(endpoint.output_micros_per_mtok)} per million output tokens"
    )
    if endpoint.default_max_tokens:
        text += f"; {endpoint.default_max_tokens} output tokens quoted when max tokens is not given"
    return text
