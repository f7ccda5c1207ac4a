"""Money is integer micro-dollars everywhere inside (1 USD = 1,000,000, USDC's 6 decimals).

These helpers convert only at the edges: dollar strings, cents, and parsing operator input.
"""

from decimal import ROUND_CEILING, Decimal, InvalidOperation

MICROS_PER_USD = 1_000_000
MICROS_PER_CENT = 10_000


def usd_to_micros(amount: str | int | Decimal) -> int:
    """Parse a dollar amount ("0.01", "12.5", 3) exactly; finer than a micro-dollar is refused."""
    try:
        value = Decimal(str(amount).strip().lstrip("$"))
    except InvalidOperation:
        raise ValueError(f"{amount!r} is not a dollar amount") from None
    if not value.is_finite():
        raise ValueError(f"{amount!r} is not a dollar amount")
    micros = value * MICROS_PER_USD
    if micros != micros.to_integral_value():
        raise ValueError(f"{amount!r} has more than 6 decimal places")
    return int(micros)


def cents_to_micros(cents: int | float | Decimal | str) -> int:
    """Cents from a request (up to 4 decimals); a fraction of a micro-dollar rounds up."""
    value = Decimal(str(cents))
    return int((value * MICROS_PER_CENT).to_integral_value(rounding=ROUND_CEILING))


def micros_to_decimal_usd(micros: int) -> str:
    """1_500 -> "0.0015", 10_000 -> "0.01", 12_500_000 -> "12.50" (at least two decimals)."""
    sign = "-" if micros < 0 else ""
    whole, fraction = divmod(abs(micros), MICROS_PER_USD)
    digits = f"{fraction:06d}".rstrip("0").ljust(2, "0")
    return f"{sign}{whole}.{digits}"


def format_usd(micros: int) -> str:
    """The contract's dollar string: "$12.50", "$0.0025", "-$1.00"."""
    text = micros_to_decimal_usd(micros)
    return f"-${text[1:]}" if text.startswith("-") else f"${text}"


def micros_to_cents(micros: int) -> int | float:
    """Cents as a JSON number: whole cents as integers, fractions to at most 4 decimals."""
    cents = Decimal(micros) / MICROS_PER_CENT
    return int(cents) if cents == cents.to_integral_value() else float(cents)
