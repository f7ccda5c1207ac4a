from types import SimpleNamespace

import pytest

from catalog.prices import (
    endpoint_price_detail,
    endpoint_price_label,
    endpoint_price_search_label,
    endpoint_price_text,
    price_unit,
)


def priced(kind: str, micros: int = 0, **fields) -> SimpleNamespace:
    defaults = {
        "result_count_path": "",
        "result_bound_param": "",
        "result_max": None,
        "input_micros_per_mtok": 0,
        "output_micros_per_mtok": 0,
        "default_max_tokens": None,
        "query_params": [],
        "body_params": [],
    }
    return SimpleNamespace(price_kind=kind, price_micros=micros, **{**defaults, **fields})


@pytest.mark.parametrize(
    ("endpoint", "label", "search_label", "unit"),
    [
        (priced("fixed", 10_000), "$0.01", "0.01", "call"),
        (priced("fixed", 1_500_000), "$1.50", "1.50", "call"),
        (priced("free"), "$0.00", "0", "call"),
        (priced("free", 10_000), "$0.00", "0", "call"),
        (priced("per_result", 2_500, result_count_path="data"), "$0.0025", "0.0025", "result"),
        (priced("dynamic"), "dynamic", "dynamic", "token"),
    ],
)
def test_prices_read_as_the_contract_says_in_each_answer(endpoint, label, search_label, unit):
    assert endpoint_price_label(endpoint) == label
    assert endpoint_price_search_label(endpoint) == search_label
    assert price_unit(kind=endpoint.price_kind) == unit


def test_the_price_detail_says_how_a_per_result_price_is_counted():
    detail = endpoint_price_detail(
        priced(
            "per_result",
            2_500,
            result_count_path="data.emails",
            result_bound_param="limit",
            result_max=100,
        )
    )
    assert detail == (
        "$0.0025 per result, counted at data.emails in the response; the limit parameter bounds "
        "the results (at most 100 quoted when it is not given)"
    )


def test_the_price_detail_names_the_providers_default_that_a_quote_uses():
    limit = {"name": "limit", "type": "integer", "required": False, "default": 10}
    detail = endpoint_price_detail(
        priced(
            "per_result",
            2_500,
            result_count_path="data.emails",
            result_bound_param="limit",
            result_max=100,
            query_params=[limit],
        )
    )
    assert detail == (
        "$0.0025 per result, counted at data.emails in the response; the limit parameter bounds "
        "the results (10, the provider's default, quoted when it is not given; at most 100)"
    )


def test_the_price_detail_gives_both_token_prices_of_a_dynamic_price():
    detail = endpoint_price_detail(
        priced(
            "dynamic",
            input_micros_per_mtok=600_000,
            output_micros_per_mtok=2_200_000,
            default_max_tokens=1024,
        )
    )
    assert detail.startswith("$0.60 per million input tokens and $2.20 per million output tokens")
    assert "1024" in detail


@pytest.mark.parametrize(
    ("endpoint", "text"),
    [
        (priced("fixed", 10_000), "$0.01 per call"),
        (priced("fixed", 0), "free"),
        (priced("free", 10_000), "free"),
        (priced("per_result", 2_500, result_count_path="data"), "$0.0025 per result"),
        (priced("dynamic"), "dynamic, per token"),
    ],
)
def test_a_price_reads_for_people_with_what_it_is_for(endpoint, text):
    assert endpoint_price_text(endpoint) == text
