from django import template

from catalog.prices import endpoint_price_text
from gateway.money import format_usd

register = template.Library()


@register.filter
def usd(micros: int) -> str:
    """Micro-dollars as the contract's dollar string: 12_500_000 -> "$12.50"."""
    return format_usd(micros)


@register.filter
def usd_signed(micros: int) -> str:
    """A ledger amount with its direction: "+$5.00" for credits, "-$0.05" for charges."""
    return f"+{format_usd(micros)}" if micros > 0 else format_usd(micros)


@register.filter
def price(endpoint) -> str:
    """An endpoint's price for people: "$0.01 per call", "$0.0025 per result", "free"..."""
    return endpoint_price_text(endpoint)
