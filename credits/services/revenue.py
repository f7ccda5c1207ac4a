"""Revenue that reaches the ledger from outside it: a payment settled on a pay-per-call rail.

The payer has no account: the stablecoin reached the platform's wallet. The event books it as
the platform issuing the amount (``rail_payment``, the platform's negative leg, as a purchase
would) and the call spending it at once: the provider organization's share (``rail_revenue``)
and the platform's fee (``rail_fee``), split as /v1/run's charges are. Every leg is a receipt,
so a settlement locks no account row.
"""

from credits.models import LedgerEntry
from credits.services.accounts import _platform_account_id, account_id_for_owner
from credits.services.ledger import Leg, fee_split, ledger_receipts_book


def rail_revenue_book(
    *,
    organization_id: int | None,
    amount_micros: int,
    payment_ref: str,
    description: str,
    metadata: dict,
) -> list[LedgerEntry]:
    """Book a settled rail payment of ``amount_micros`` for an API owned by ``organization_id``
    (None: the platform's own). Booking the same ``payment_ref`` again books nothing."""
    platform_id = _platform_account_id()
    revenue, fee = fee_split(amount_micros=amount_micros, has_provider=organization_id is not None)
    legs = [Leg(platform_id, LedgerEntry.Type.RAIL_PAYMENT, -amount_micros, "payment")]
    if revenue:
        provider_id = account_id_for_owner(user_id=None, organization_id=organization_id)
        legs.append(Leg(provider_id, LedgerEntry.Type.RAIL_REVENUE, revenue, "provider"))
    if fee:
        legs.append(Leg(platform_id, LedgerEntry.Type.RAIL_FEE, fee, "fee"))
    return ledger_receipts_book(
        receipts=legs, event_ref=payment_ref, description=description, metadata=metadata
    )
