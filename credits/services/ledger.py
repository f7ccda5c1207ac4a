"""The append-only ledger: every change to money is one event of legs that sum to zero. Each
top-level service owns one short transaction that locks the accounts it moves (in id order),
updates them with F() and appends the ledger legs, in that order. Nothing here calls the network.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import BigIntegerField, Case, F, Value, When
from django.utils import timezone

from credits.models import Account, LedgerEntry
from credits.services.accounts import _lock_accounts, account_platform
from gateway.errors import Conflict, InvalidRequest


@dataclass(frozen=True)
class Leg:
    account_id: int
    type: str
    amount_micros: int
    role: str


def _book(
    *,
    legs: list[Leg],
    event_ref: str,
    description: str,
    metadata: dict,
    now: datetime,
    balances: dict[int, int],
    held_released: dict[int, int] | None = None,
) -> list[LedgerEntry]:
    """Append the legs of one event to accounts locked by the caller, whose balances before
    the event are ``balances``. The legs must sum to zero. ``held_released`` lowers the held
    amount of accounts in the same update."""
    if sum(leg.amount_micros for leg in legs) != 0:
        raise ValueError(f"ledger event {event_ref} does not balance")
    held_released = held_released or {}
    moved = {leg.account_id: leg.amount_micros for leg in legs if leg.amount_micros}
    changed = sorted(set(moved) | set(held_released))
    # One UPDATE moves every leg (and releases holds): fewer round trips while the rows are
    # locked, on the hottest path of the gateway.
    changes = {}
    if moved:
        changes["balance_micros"] = F("balance_micros") + _by_account(moved)
    if held_released:
        changes["held_micros"] = F("held_micros") - _by_account(held_released)
    if changed:
        Account.objects.filter(pk__in=changed).update(**changes)
    entries = []
    for leg in legs:
        if leg.amount_micros == 0:
            continue
        balances[leg.account_id] += leg.amount_micros
        entries.append(
            LedgerEntry(
                account_id=leg.account_id,
                type=leg.type,
                amount_micros=leg.amount_micros,
                balance_after_micros=balances[leg.account_id],
                description=description,
                metadata=metadata,
                event_ref=event_ref,
                idempotency_ref=f"{event_ref}:{leg.role}",
                created_at=now,
            )
        )
    return LedgerEntry.objects.bulk_create(entries)


def _by_account(amounts: dict[int, int]) -> Case:
    return Case(
        *(When(pk=account_id, then=Value(amount)) for account_id, amount in amounts.items()),
        default=Value(0),
        output_field=BigIntegerField(),
    )


def _balances(accounts: dict[int, Account]) -> dict[int, int]:
    return {pk: account.balance_micros for pk, account in accounts.items()}


def _book_from_platform(
    *, account: Account, entry_type: str, amount_micros: int, reason: str, event_ref: str
) -> list[LedgerEntry]:
    """Move ``amount_micros`` from the platform account to ``account`` (back when negative) as
    one two-leg event, in a transaction of its own."""
    platform = account_platform()
    with transaction.atomic():
        accounts = _lock_accounts([account.pk, platform.pk])
        return _book(
            legs=[
                Leg(platform.pk, entry_type, -amount_micros, "platform"),
                Leg(account.pk, entry_type, amount_micros, "account"),
            ],
            event_ref=event_ref,
            description=reason,
            metadata={"reason": reason},
            now=timezone.now(),
            balances=_balances(accounts),
        )


GRANT_REASON_MAX_LENGTH = 300  # what the admin's grant form and grant_credits accept


def credits_grant(
    *,
    account: Account,
    amount_micros: int,
    reason: str,
    entry_type: str = LedgerEntry.Type.GRANT,
    idempotency_ref: str | None = None,
) -> list[LedgerEntry]:
    """Credit an account from the platform (a grant, or a purchase paid outside the ledger).

    With an ``idempotency_ref`` a repeated call books nothing and returns the first booking.
    """
    if amount_micros <= 0:
        raise InvalidRequest("The amount to grant must be positive")
    if entry_type not in (LedgerEntry.Type.GRANT, LedgerEntry.Type.PURCHASE):
        raise InvalidRequest("Credits are granted or purchased")
    if account.kind == Account.Kind.PLATFORM:
        raise InvalidRequest("The platform account cannot be granted credits")
    event_ref = f"{entry_type}:{idempotency_ref or uuid.uuid4().hex}"
    try:
        return _book_from_platform(
            account=account,
            entry_type=entry_type,
            amount_micros=amount_micros,
            reason=reason,
            event_ref=event_ref,
        )
    except IntegrityError:
        existing = list(LedgerEntry.objects.filter(event_ref=event_ref))
        if existing:
            return existing
        raise


def credits_adjust(*, account: Account, amount_micros: int, reason: str) -> list[LedgerEntry]:
    """An operator's correction (or a provider payout when negative), against the platform."""
    if amount_micros == 0:
        raise InvalidRequest("An adjustment must move money")
    try:
        return _book_from_platform(
            account=account,
            entry_type=LedgerEntry.Type.ADJUSTMENT,
            amount_micros=amount_micros,
            reason=reason,
            event_ref=f"adjustment:{uuid.uuid4().hex}",
        )
    except IntegrityError as error:
        if "account_balance_not_negative" in str(error) or "held_within_balance" in str(error):
            raise Conflict(
                "The account's available balance does not cover this adjustment"
            ) from None
        raise


def ledger_refund(*, entry: LedgerEntry, reason: str) -> list[LedgerEntry]:
    """Reverse every leg of a charged call (caller, provider, platform). Only once."""
    if entry.type != LedgerEntry.Type.API_CALL:
        raise InvalidRequest("Only api_call entries can be refunded")
    original = list(LedgerEntry.objects.filter(event_ref=entry.event_ref))
    refund_ref = f"refund:{entry.event_ref}"
    if LedgerEntry.objects.filter(event_ref=refund_ref).exists():
        raise Conflict("This call was already refunded")
    try:
        with transaction.atomic():
            accounts = _lock_accounts([leg.account_id for leg in original])
            return _book(
                legs=[
                    Leg(leg.account_id, LedgerEntry.Type.REFUND, -leg.amount_micros, f"{leg.pk}")
                    for leg in original
                ],
                event_ref=refund_ref,
                description=f"Refund: {reason}",
                metadata={**entry.metadata, "reason": reason, "refundOf": entry.event_ref},
                now=timezone.now(),
                balances=_balances(accounts),
            )
    except IntegrityError as error:
        if LedgerEntry.objects.filter(event_ref=refund_ref).exists():
            raise Conflict("This call was already refunded") from None
        if "account_balance_not_negative" in str(error):
            raise Conflict(
                "The provider's balance no longer covers the revenue to reverse"
            ) from None
        raise


def fee_split(*, amount_micros: int, has_provider: bool) -> tuple[int, int]:
    """(provider revenue, platform fee); the fee rounds down in the provider's favour."""
    if not has_provider:
        return 0, amount_micros
    fee = amount_micros * settings.PLATFORM_FEE_BPS // 10_000
    return amount_micros - fee, fee
