"""Purchases: credits bought with money from outside the ledger, by card (a Stripe Checkout
session, booked from its signed webhook event) or in USDC on the x402 rail (booked when the rail
settles the payment), and the card refunds and disputes that take them back.

A purchase is booked like a grant: the buyer's positive leg under the buyer's lock and the
platform's negative leg as a receipt, one ``purchase`` event written with its ``Purchase`` row in
one transaction. The row is unique per payment, so a payment announced twice (a webhook
replayed, a settlement reconciled again) is credited once. A refund or a dispute books a
``refund`` event reversing part or all of it, whatever the buyer has left: the balance may go
negative, and hold reservation then refuses every paid call until the account is topped up.

Only ``card_event_handle`` may call the network (Stripe, to find the session of a refund that
arrived before the session's own event), and never inside a transaction.
"""

import logging
from collections.abc import Callable

from django.db import IntegrityError, transaction
from django.utils import timezone

from credits import checkout
from credits.models import LedgerEntry, Purchase
from credits.services.accounts import account_platform
from credits.services.ledger import Leg, _balances, _book, _lock_and_roll_up
from gateway.errors import InvalidRequest
from gateway.money import MICROS_PER_CENT, format_usd

logger = logging.getLogger("credits")

# The bounds of one purchase, by card or in USDC, and the amounts the dashboard offers first.
PURCHASE_MIN_MICROS = 5_000_000
PURCHASE_MAX_MICROS = 1_000_000_000
PURCHASE_PRESETS_MICROS = (10_000_000, 25_000_000, 100_000_000)

# The Stripe events the webhook acts on.
CARD_PAID_EVENTS = ("checkout.session.completed", "checkout.session.async_payment_succeeded")
CARD_REFUNDED_EVENT = "charge.refunded"
CARD_DISPUTED_EVENT = "charge.dispute.created"


def purchase_amount_validate(*, amount_micros: int) -> None:
    """Refuse an amount outside the purchase bounds, or finer than a cent (cards pay cents)."""
    if amount_micros % MICROS_PER_CENT:
        raise InvalidRequest("Buy credits in whole cents")
    if not PURCHASE_MIN_MICROS <= amount_micros <= PURCHASE_MAX_MICROS:
        raise InvalidRequest(
            f"Buy between {format_usd(PURCHASE_MIN_MICROS)} and "
            f"{format_usd(PURCHASE_MAX_MICROS)} of credits at a time"
        )


def purchase_book(
    *,
    account_id: int,
    method: str,
    reference: str,
    amount_micros: int,
    description: str,
    payment_reference: str = "",
    metadata: dict | None = None,
) -> Purchase:
    """Credit the account with a payment received, once per (``method``, ``reference``):
    booking the same payment again books nothing and returns the first purchase. Runs in a
    transaction of its own (a savepoint inside the caller's)."""
    if amount_micros <= 0:
        raise InvalidRequest("A purchase must be positive")
    platform = account_platform()
    if account_id == platform.pk:
        raise InvalidRequest("The platform account cannot buy credits")
    metadata = {**(metadata or {}), "method": method}
    event_ref = f"purchase:{method}:{reference}"
    now = timezone.now()
    try:
        with transaction.atomic():
            accounts = _lock_and_roll_up([account_id])
            if account_id not in accounts:
                raise InvalidRequest(f"No account {account_id} to credit")
            purchase = Purchase.objects.create(
                account_id=account_id,
                method=method,
                reference=reference,
                payment_reference=payment_reference,
                amount_micros=amount_micros,
                event_ref=event_ref,
                metadata=metadata,
                created_at=now,
            )
            _book(
                legs=[Leg(account_id, LedgerEntry.Type.PURCHASE, amount_micros, "account")],
                receipts=[Leg(platform.pk, LedgerEntry.Type.PURCHASE, -amount_micros, "platform")],
                event_ref=event_ref,
                description=description,
                metadata={**metadata, "purchaseId": purchase.public_id},
                now=now,
                balances=_balances(accounts),
            )
    except IntegrityError:
        existing = Purchase.objects.filter(method=method, reference=reference).first()
        if existing is None:
            raise
        return existing
    return purchase


def purchase_refund(
    *, purchase: Purchase, refunded_micros: int, reason: str, metadata: dict | None = None
) -> list[LedgerEntry]:
    """Bring what refunds took back from a purchase up to ``refunded_micros`` in all (a card's
    refunded amount so far, which Stripe reports after each refund) and book the difference as
    a ``refund`` event. A total reported again, or after a larger one, books nothing."""

    def missing(locked: Purchase) -> int:
        target = min(refunded_micros, locked.amount_micros - locked.disputed_micros)
        return target - locked.refunded_micros

    return _take_back(
        purchase=purchase,
        field="refunded_micros",
        event_ref=f"refund:purchase:{purchase.pk}:refunded-to:{refunded_micros}",
        amount_of=missing,
        reason=reason,
        metadata=metadata,
    )


def purchase_dispute(
    *,
    purchase: Purchase,
    dispute_ref: str,
    disputed_micros: int,
    reason: str,
    metadata: dict | None = None,
) -> list[LedgerEntry]:
    """Take back what a dispute contests (at most what refunds left of the purchase), once
    per dispute."""

    def contested(locked: Purchase) -> int:
        return min(disputed_micros, locked.amount_micros - locked.reversed_micros)

    return _take_back(
        purchase=purchase,
        field="disputed_micros",
        event_ref=f"refund:purchase:{purchase.pk}:dispute:{dispute_ref}",
        amount_of=contested,
        reason=reason,
        metadata=metadata,
    )


def _take_back(
    *,
    purchase: Purchase,
    field: str,
    event_ref: str,
    amount_of: Callable[[Purchase], int],
    reason: str,
    metadata: dict | None,
) -> list[LedgerEntry]:
    """Book a reversing ``refund`` event of ``amount_of(purchase)`` against the buyer, however
    little the buyer has left. Every take-back of a purchase holds its buyer's lock, so the
    amounts already taken back, read under it, are exact."""
    platform = account_platform()
    with transaction.atomic():
        accounts = _lock_and_roll_up([purchase.account_id])
        existing = list(LedgerEntry.objects.filter(event_ref=event_ref).order_by("pk"))
        if existing:
            return existing
        locked = Purchase.objects.select_for_update().get(pk=purchase.pk)
        amount = amount_of(locked)
        if amount <= 0:
            return []
        setattr(locked, field, getattr(locked, field) + amount)
        locked.save(update_fields=[field])
        entries = _book(
            legs=[Leg(locked.account_id, LedgerEntry.Type.REFUND, -amount, "account")],
            receipts=[Leg(platform.pk, LedgerEntry.Type.REFUND, amount, "platform")],
            event_ref=event_ref,
            description=reason,
            metadata={
                **(metadata or {}),
                "method": locked.method,
                "purchaseId": locked.public_id,
                "refundOf": locked.event_ref,
            },
            now=timezone.now(),
            balances=_balances(accounts),
        )
    setattr(purchase, field, getattr(locked, field))
    return entries


# --- Card payments: Stripe's webhook events --------------------------------------------------


def card_event_handle(*, event: dict) -> str:
    """Book what a verified Stripe event says happened to a purchase by card, and say what was
    done. A paid Checkout session books its purchase; a refund or a dispute takes it back.
    Raises InvalidRequest for a session of this gateway that cannot be booked, and
    checkout.StripeUnavailable when Stripe must be asked and cannot be (Stripe delivers the
    event again later)."""
    kind = str(event.get("type", ""))
    subject = (event.get("data") or {}).get("object") or {}
    event_id = str(event.get("id", ""))
    if kind in CARD_PAID_EVENTS:
        return _card_session_book(session=subject)
    if kind == CARD_REFUNDED_EVENT:
        purchase = _card_purchase_of(payment_intent=_stripe_id(subject.get("payment_intent")))
        if purchase is None:
            return "ignored: not a purchase of credits"
        _require_dollars(subject)
        entries = purchase_refund(
            purchase=purchase,
            refunded_micros=int(subject.get("amount_refunded") or 0) * MICROS_PER_CENT,
            reason=f"Card refund of {purchase.public_id}",
            metadata={"charge": str(subject.get("id", "")), "stripeEvent": event_id},
        )
        return "refund booked" if entries else "nothing left to take back"
    if kind == CARD_DISPUTED_EVENT:
        purchase = _card_purchase_of(payment_intent=_stripe_id(subject.get("payment_intent")))
        if purchase is None:
            return "ignored: not a purchase of credits"
        _require_dollars(subject)
        entries = purchase_dispute(
            purchase=purchase,
            dispute_ref=str(subject.get("id", "")),
            disputed_micros=int(subject.get("amount") or 0) * MICROS_PER_CENT,
            reason=f"Card dispute of {purchase.public_id}",
            metadata={
                "dispute": str(subject.get("id", "")),
                "charge": _stripe_id(subject.get("charge")),
                "stripeEvent": event_id,
            },
        )
        return "dispute booked" if entries else "nothing left to take back"
    return f"ignored: {kind or 'no type'}"


def _card_session_book(*, session: dict) -> str:
    if (session.get("metadata") or {}).get("purpose") != checkout.PURPOSE:
        return "ignored: not a session of this gateway"
    if session.get("payment_status") != "paid":
        # An asynchronous payment method: checkout.session.async_payment_succeeded follows.
        return "ignored: not paid yet"
    _require_dollars(session)
    amount_cents = session.get("amount_total")
    if session.get("mode") != "payment" or not isinstance(amount_cents, int) or amount_cents <= 0:
        raise InvalidRequest(f"Checkout session {session.get('id')} is not a payment of credits")
    try:
        account_id = int(session.get("client_reference_id") or "")
    except ValueError:
        raise InvalidRequest(
            f"Checkout session {session.get('id')} names no account to credit"
        ) from None
    payment_intent = _stripe_id(session.get("payment_intent"))
    purchase = purchase_book(
        account_id=account_id,
        method=Purchase.Method.CARD,
        reference=str(session["id"]),
        amount_micros=amount_cents * MICROS_PER_CENT,
        description="Credits bought by card",
        payment_reference=payment_intent,
        metadata={"checkoutSession": str(session["id"]), "paymentIntent": payment_intent},
    )
    return f"purchase {purchase.public_id} booked"


def _card_purchase_of(*, payment_intent: str) -> Purchase | None:
    """The card purchase a PaymentIntent paid for. Stripe does not order its deliveries, so a
    refund may come before the session's own event: the purchase is then booked from the
    session first, as Stripe describes it now."""
    if not payment_intent:
        return None
    found = Purchase.objects.filter(
        method=Purchase.Method.CARD, payment_reference=payment_intent
    ).first()
    if found is not None:
        return found
    session = checkout.checkout_session_for_payment(payment_intent=payment_intent)
    if session is None or not _card_session_book(session=session).startswith("purchase"):
        return None
    logger.info("Booked the purchase of %s from its session, ahead of its event", payment_intent)
    return Purchase.objects.filter(
        method=Purchase.Method.CARD, payment_reference=payment_intent
    ).first()


def _require_dollars(subject: dict) -> None:
    if str(subject.get("currency", "")).lower() != "usd":
        raise InvalidRequest(f"{subject.get('id')} is not in US dollars; credits are")


def _stripe_id(value) -> str:
    """An id Stripe sends either as is or as the expanded object."""
    if isinstance(value, dict):
        return str(value.get("id", ""))
    return str(value or "")
