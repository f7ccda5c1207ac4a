import pytest

from gateway.money import (
    cents_to_micros,
    format_usd,
    micros_to_cents,
    micros_to_decimal_usd,
    usd_to_micros,
)


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("0.01", 10_000),
        ("$12.50", 12_500_000),
        ("3", 3_000_000),
        ("0.000001", 1),
        (" 1.5 ", 1_500_000),
    ],
)
def test_dollar_amounts_parse_exactly(text, micros):
    assert usd_to_micros(text) == micros


@pytest.mark.parametrize("text", ["0.0000001", "abc", "", "NaN", "Infinity"])
def test_amounts_finer_than_a_micro_dollar_or_not_numbers_are_refused(text):
    with pytest.raises(ValueError):
        usd_to_micros(text)


@pytest.mark.parametrize(
    ("micros", "formatted"),
    [
        (12_500_000, "$12.50"),
        (10_000, "$0.01"),
        (2_500, "$0.0025"),
        (0, "$0.00"),
        (1, "$0.000001"),
        (-1_000_000, "-$1.00"),
        (123_456_789, "$123.456789"),
    ],
)
def test_dollar_strings_have_at_least_two_decimals(micros, formatted):
    assert format_usd(micros) == formatted
    assert micros_to_decimal_usd(micros) == formatted.replace("$", "")


@pytest.mark.parametrize(
    ("micros", "cents"),
    [(10_000, 1), (2_500, 0.25), (1, 0.0001), (12_500_000, 1250), (-5_000, -0.5)],
)
def test_cents_are_json_numbers_with_at_most_four_decimals(micros, cents):
    assert micros_to_cents(micros) == cents
    assert type(micros_to_cents(micros)) is type(cents)


def test_cents_from_a_request_round_a_fraction_of_a_micro_up():
    assert cents_to_micros(1) == 10_000
    assert cents_to_micros(0.25) == 2_500
    assert cents_to_micros("0.00001") == 1
