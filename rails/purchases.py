"""Buying credits in USDC on the x402 rail: ``POST {X402_URL}/credits/purchase`` with a gateway
key. The request is a rail request whose price is the amount asked: verified and claimed as a
call's payment is, then settled at once (nothing else is served), and its settlement books a
``purchase`` for the account of the caller's key (rails.services.payment_settle_record), so a
settlement reconciled later by ``rails_reconcile`` books it too, once.
"""

import secrets
import time

from django.conf import settings

from credits.models import Purchase
from gateway.money import micros_to_cents
from rails.models import RailPayment
from rails.offers import X402, rail_url, usdc_amount
from rails.payment import Resource, X402Payment

PURCHASE_SLUG, PURCHASE_PATH = "credits", "/purchase"
DESCRIPTION = "Credits of the API gateway"


def new_purchase_request_id() -> str:
    return f"purchase_{int(time.time() * 1000)}_{secrets.token_hex(6)}"


def purchase_record(purchase: Purchase) -> dict:
    """A purchase paid in USDC as the purchase route answers it."""
    return {
        "id": purchase.public_id,
        "method": purchase.method,
        "amountCents": micros_to_cents(purchase.amount_micros),
        "network": purchase.metadata.get("network", ""),
        "transaction": purchase.payment_reference,
        "timestamp": purchase.created_at.isoformat().replace("+00:00", "Z"),
    }


def purchase_resource() -> Resource:
    return Resource(
        protocol=X402,
        url=rail_url(protocol=X402, slug=PURCHASE_SLUG, path=PURCHASE_PATH),
        slug=PURCHASE_SLUG,
        path=PURCHASE_PATH,
    )


class CreditsPurchasePayment(X402Payment):
    """A payment of ``amount_micros`` in USDC for credits of the account ``account_id``."""

    def __init__(
        self, *, header: str | None, header_name: str | None, account_id: int, amount_micros: int
    ):
        super().__init__(resource=purchase_resource(), header=header, header_name=header_name)
        self.account_id = account_id
        self.amount_micros = amount_micros

    def pay(self, *, request_id: str) -> RailPayment:
        """Verify, claim and settle the payment, or raise the 402 (or 503) that says why not.
        The claim returned is settled, or pending when the settlement did not answer in time."""
        self._verify_and_claim(
            amount_micros=self.amount_micros,
            description=DESCRIPTION,
            request_id=request_id,
            credits_account_id=self.account_id,
        )
        self._settle_claim(self.claim, upstream_ms=None, description=DESCRIPTION)
        return self.claim

    def _offers(self, amount_micros: int) -> list[dict]:
        return [
            {
                "method": X402,
                "intent": "charge",
                "rail": network,
                "currency": "USDC",
                "amount": usdc_amount(amount_micros),
                "url": self.resource.url,
            }
            for network in settings.X402_NETWORKS
        ]
