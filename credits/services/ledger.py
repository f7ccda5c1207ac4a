"""The append-only ledger: every change to money is one event of legs that sum to zero. Each
top-level service owns one short transaction that locks the accounts it debits (in id order),
rolls their waiting receipts up, updates them with F() and appends the ledger legs, in that
order. Money an account only receives (a provider's revenue, the platform's fee or its side of
a grant) is a receipt: appended without locking its account, and folded into the account's
rolled-up balance later (receipts_roll_up). Nothing here calls the network.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import BigIntegerField, Case, F, Value, When
from django.utils import timezone

from credits.models import Account, LedgerEntry
from credits.services.accounts import _lock_accounts, _platform_account_id, account_platform
from gateway.errors import Conflict, InvalidRequest


@dataclass(frozen=True)
class Leg:
    account_id: int
    type: str
    amount_micros: int
    role: str


# How many receipts one transaction of the roll-up command folds, so that it never holds an
# account's row lock for long however many receipts waited.
ROLL_UP_BATCH = 5_000


def _roll_up_locked(account: Account, *, limit: int | None = None) -> int:
    """Fold the account's waiting receipts (at most ``limit``, oldest first) into its rolled-up
    balance; the caller holds the account's row lock. Returns how many were folded.

    Only the receipts read here are marked and added: one committed meanwhile waits for the next
    roll-up, and none can be folded twice, since every roll-up of an account holds its lock.
    """
    pending = LedgerEntry.objects.filter(account_id=account.pk, rolled_up=False).order_by("pk")
    if limit is not None:
        pending = pending[:limit]
    folded = list(pending.values_list("pk", "amount_micros"))
    if not folded:
        return 0
    LedgerEntry.objects.filter(pk__in=[pk for pk, _ in folded]).update(rolled_up=True)
    total = sum(amount for _, amount in folded)
    Account.objects.filter(pk=account.pk).update(rolled_up_micros=F("rolled_up_micros") + total)
    account.refresh_from_db(fields=["rolled_up_micros"])
    return len(folded)


def _lock_and_roll_up(account_ids) -> dict[int, Account]:
    """Lock the accounts in id order and roll each one's receipts up, so that their rolled-up
    balances are their whole balances while the locks last."""
    accounts = _lock_accounts(account_ids)
    for account in accounts.values():
        _roll_up_locked(account)
    return accounts


def receipts_roll_up(*, batch_size: int = ROLL_UP_BATCH) -> tuple[int, int]:
    """Fold every waiting receipt into its account's rolled-up balance, one short transaction
    per ``batch_size`` receipts of an account. Idempotent and safe beside live traffic: run it
    as often as wanted (``roll_up_receipts``). Returns (receipts folded, accounts touched)."""
    folded = touched = 0
    waiting = (
        LedgerEntry.objects.filter(rolled_up=False)
        .order_by("account_id")
        .values_list("account_id", flat=True)
        .distinct()
    )
    for account_id in list(waiting):
        touched += 1
        while True:
            with transaction.atomic():
                account = _lock_accounts([account_id])[account_id]
                batch = _roll_up_locked(account, limit=batch_size)
            folded += batch
            if batch < batch_size:
                break
    return folded, touched


def _book(
    *,
    legs: list[Leg],
    event_ref: str,
    description: str,
    metadata: dict,
    now: datetime,
    balances: dict[int, int],
    receipts: list[Leg] = (),
    held_released: dict[int, int] | None = None,
) -> list[LedgerEntry]:
    """Append the legs of one event. ``legs`` move accounts the caller has locked and rolled
    up, whose balances before the event are ``balances``; ``receipts`` are appended to their
    accounts without touching their rows. Together they must sum to zero. ``held_released``
    lowers the held amount of locked accounts in the same update."""
    if sum(leg.amount_micros for leg in [*legs, *receipts]) != 0:
        raise ValueError(f"ledger event {event_ref} does not balance")
    held_released = held_released or {}
    moved: dict[int, int] = {}
    for leg in legs:
        if leg.amount_micros:
            moved[leg.account_id] = moved.get(leg.account_id, 0) + leg.amount_micros
    changed = sorted(set(moved) | set(held_released))
    # One UPDATE moves every leg (and releases holds): fewer round trips while the rows are
    # locked, on the hottest path of the gateway.
    changes = {}
    if moved:
        changes["rolled_up_micros"] = F("rolled_up_micros") + _by_account(moved)
    if held_released:
        changes["held_micros"] = F("held_micros") - _by_account(held_released)
    if changed:
        Account.objects.filter(pk__in=changed).update(**changes)
    entries = []
    for locked, leg in [(True, leg) for leg in legs] + [(False, leg) for leg in receipts]:
        if leg.amount_micros == 0:
            continue
        if locked:
            balances[leg.account_id] += leg.amount_micros
        entries.append(
            LedgerEntry(
                account_id=leg.account_id,
                type=leg.type,
                amount_micros=leg.amount_micros,
                balance_after_micros=balances[leg.account_id] if locked else None,
                rolled_up=locked,
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
    return {pk: account.rolled_up_micros for pk, account in accounts.items()}


def ledger_receipts_book(
    *,
    receipts: list[Leg],
    event_ref: str,
    description: str,
    metadata: dict | None = None,
) -> list[LedgerEntry]:
    """Book an event whose every leg is a receipt: appended to its account without locking or
    updating the account's row, so that booking never waits for another and never overdraws.

    The legs must sum to zero and only the platform account (which may go negative) takes a
    negative one: an account that must stay positive is debited under its lock, never here.
    Each leg's ``role`` names it within the event (its idempotency reference is
    ``<event_ref>:<role>``): booking the same event again books nothing and returns the first
    booking. Runs in a transaction of its own (a savepoint inside the caller's).
    """
    if not receipts:
        raise InvalidRequest("An event needs at least one leg")
    if sum(leg.amount_micros for leg in receipts) != 0:
        raise InvalidRequest(f"The legs of {event_ref} do not sum to zero")
    platform_id = _platform_account_id()
    if any(leg.amount_micros < 0 and leg.account_id != platform_id for leg in receipts):
        raise InvalidRequest("Only the platform account takes a negative receipt")
    try:
        with transaction.atomic():
            return _book(
                legs=[],
                receipts=receipts,
                event_ref=event_ref,
                description=description,
                metadata=metadata or {},
                now=timezone.now(),
                balances={},
            )
    except IntegrityError:
        existing = list(LedgerEntry.objects.filter(event_ref=event_ref).order_by("pk"))
        if existing:
            return existing
        raise


def _refuse_overdraft(accounts: dict[int, Account], legs: list[Leg], message: str) -> None:
    """Refuse legs that would take a locked, rolled-up user or organization account below what
    it holds for calls in progress: the database lets a balance go negative (a purchase taken
    back), so every other debit outside a hold is checked here, under the account's lock. The
    platform account may go negative."""
    moved: dict[int, int] = {}
    for leg in legs:
        moved[leg.account_id] = moved.get(leg.account_id, 0) + leg.amount_micros
    for account_id, amount in moved.items():
        account = accounts[account_id]
        if account.kind == Account.Kind.PLATFORM or amount >= 0:
            continue
        if account.rolled_up_micros + amount < account.held_micros:
            raise Conflict(message)


def _book_from_platform(
    *, account: Account, entry_type: str, amount_micros: int, reason: str, event_ref: str
) -> list[LedgerEntry]:
    """Move ``amount_micros`` from the platform account to ``account`` (back when negative, if
    the account's available balance covers it) as one two-leg event, in a transaction of its
    own. Only ``account`` is locked: the platform's leg is a receipt."""
    platform = account_platform()
    leg = Leg(account.pk, entry_type, amount_micros, "account")
    with transaction.atomic():
        accounts = _lock_and_roll_up([account.pk])
        _refuse_overdraft(
            accounts, [leg], "The account's available balance does not cover this adjustment"
        )
        return _book(
            legs=[leg],
            receipts=[Leg(platform.pk, entry_type, -amount_micros, "platform")],
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
    return _book_from_platform(
        account=account,
        entry_type=LedgerEntry.Type.ADJUSTMENT,
        amount_micros=amount_micros,
        reason=reason,
        event_ref=f"adjustment:{uuid.uuid4().hex}",
    )


def ledger_refund(*, entry: LedgerEntry, reason: str) -> list[LedgerEntry]:
    """Reverse every leg of a charged call (caller, provider, platform). Only once."""
    if entry.type != LedgerEntry.Type.API_CALL:
        raise InvalidRequest("Only api_call entries can be refunded")
    original = list(LedgerEntry.objects.filter(event_ref=entry.event_ref))
    refund_ref = f"refund:{entry.event_ref}"
    if LedgerEntry.objects.filter(event_ref=refund_ref).exists():
        raise Conflict("This call was already refunded")
    reversed_legs = [
        Leg(leg.account_id, LedgerEntry.Type.REFUND, -leg.amount_micros, f"{leg.pk}")
        for leg in original
    ]
    # Every account gives back under its lock (none may be overdrawn) but the platform's, whose
    # leg is a receipt like the fee it reverses.
    platform_id = _platform_account_id()
    locked_legs = [leg for leg in reversed_legs if leg.account_id != platform_id]
    try:
        with transaction.atomic():
            accounts = _lock_and_roll_up([leg.account_id for leg in locked_legs])
            _refuse_overdraft(
                accounts,
                locked_legs,
                "The provider's balance no longer covers the revenue to reverse",
            )
            return _book(
                legs=locked_legs,
                receipts=[leg for leg in reversed_legs if leg.account_id == platform_id],
                event_ref=refund_ref,
                description=f"Refund: {reason}",
                metadata={**entry.metadata, "reason": reason, "refundOf": entry.event_ref},
                now=timezone.now(),
                balances=_balances(accounts),
            )
    except IntegrityError:
        if LedgerEntry.objects.filter(event_ref=refund_ref).exists():
            raise Conflict("This call was already refunded") from None
        raise


def fee_split(*, amount_micros: int, has_provider: bool) -> tuple[int, int]:
    """(provider revenue, platform fee); the fee rounds down in the provider's favour."""
    if not has_provider:
        return 0, amount_micros
    fee = amount_micros * settings.PLATFORM_FEE_BPS // 10_000
    return amount_micros - fee, fee
