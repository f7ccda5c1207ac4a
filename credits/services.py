"""Every change to money. Each top-level service owns one short transaction that locks the
accounts it moves (in id order), updates them with F() and appends the ledger legs, in that
order. Nothing here calls the network. Locks are always taken account(s) first, then holds.
"""

import logging
import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import BigIntegerField, Case, F, Q, Value, When
from django.utils import timezone

from credits import settlement_sql
from credits.models import Account, Hold, LedgerEntry, UsageEvent
from gateway.errors import Conflict, InsufficientCredits, InvalidRequest, NotFound
from gateway.models import Organization, User
from gateway.money import format_usd, micros_to_cents

logger = logging.getLogger("credits")


@dataclass(frozen=True)
class Leg:
    account_id: int
    type: str
    amount_micros: int
    role: str


def account_for_user(*, user: User | int) -> Account:
    user_id = user if isinstance(user, int) else user.pk
    return _account_get_or_create(kind=Account.Kind.USER, user_id=user_id)


def account_for_organization(*, organization: Organization | int) -> Account:
    organization_id = organization if isinstance(organization, int) else organization.pk
    return _account_get_or_create(kind=Account.Kind.ORGANIZATION, organization_id=organization_id)


def account_platform() -> Account:
    return _account_get_or_create(kind=Account.Kind.PLATFORM)


def account_for_owner(*, user_id: int | None, organization_id: int | None) -> Account:
    if organization_id:
        return account_for_organization(organization=organization_id)
    return account_for_user(user=user_id)


# Accounts never change owner and are never deleted, so their ids can be remembered per process.
_account_ids: dict[tuple[str, int], int] = {}


def account_id_for_owner(*, user_id: int | None, organization_id: int | None) -> int:
    key = ("organization", organization_id) if organization_id else ("user", user_id)
    account_id = _account_ids.get(key)
    if account_id is None:
        account_id = account_for_owner(user_id=user_id, organization_id=organization_id).pk
        _account_ids[key] = account_id
    return account_id


def _account_get_or_create(*, kind: str, **owner) -> Account:
    account = Account.objects.filter(kind=kind, **owner).first()
    if account:
        return account
    try:
        with transaction.atomic():
            return Account.objects.create(kind=kind, **owner)
    except IntegrityError:  # created concurrently; the unique owner constraint decided
        return Account.objects.get(kind=kind, **owner)


def _for_update(manager):
    """Row locks for writers that never change a key column: FOR NO KEY UPDATE excludes every
    other writer as FOR UPDATE does, but not the KEY SHARE lock a foreign key check takes, so
    inserting a row that refers to an account (a rejected call's usage event) never waits for
    that account's settlement."""
    return manager.select_for_update(no_key=True)


def _lock_accounts(account_ids) -> dict[int, Account]:
    locked = _for_update(Account.objects).filter(pk__in=set(account_ids)).order_by("pk")
    return {account.pk: account for account in locked}


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
    platform = account_platform()
    try:
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
    except IntegrityError:
        existing = list(LedgerEntry.objects.filter(event_ref=event_ref))
        if existing:
            return existing
        raise


def credits_adjust(*, account: Account, amount_micros: int, reason: str) -> list[LedgerEntry]:
    """An operator's correction (or a provider payout when negative), against the platform."""
    if amount_micros == 0:
        raise InvalidRequest("An adjustment must move money")
    platform = account_platform()
    try:
        with transaction.atomic():
            accounts = _lock_accounts([account.pk, platform.pk])
            return _book(
                legs=[
                    Leg(platform.pk, LedgerEntry.Type.ADJUSTMENT, -amount_micros, "platform"),
                    Leg(account.pk, LedgerEntry.Type.ADJUSTMENT, amount_micros, "account"),
                ],
                event_ref=f"adjustment:{uuid.uuid4().hex}",
                description=reason,
                metadata={"reason": reason},
                now=timezone.now(),
                balances=_balances(accounts),
            )
    except IntegrityError as error:
        if "account_balance_not_negative" in str(error) or "held_within_balance" in str(error):
            raise Conflict(
                "The account's available balance does not cover this adjustment"
            ) from None
        raise


def _expire_pending_holds(*, account: Account, now: datetime) -> int:
    """Expire the account's overdue pending holds; the caller holds the account's row lock."""
    overdue = list(
        _for_update(Hold.objects)
        .filter(account=account, status=Hold.Status.PENDING, expires_at__lt=now)
        .values_list("pk", "amount_micros")
    )
    if not overdue:
        return 0
    released = sum(amount for _, amount in overdue)
    Hold.objects.filter(pk__in=[pk for pk, _ in overdue]).update(
        status=Hold.Status.EXPIRED, settled_at=now
    )
    Account.objects.filter(pk=account.pk).update(held_micros=F("held_micros") - released)
    account.held_micros -= released
    return len(overdue)


def _savepoint_if_in_transaction():
    """A single statement is atomic on its own; inside a caller's transaction, a savepoint keeps
    its failure from aborting that transaction."""
    return transaction.atomic() if connection.in_atomic_block else nullcontext()


def account_ids_forget() -> None:
    """Forget the account ids this process remembers (tests roll accounts back)."""
    global _platform_id
    _account_ids.clear()
    _platform_id = None


# PostgreSQL breaks a deadlock by ending one of its transactions, which is meant to be run again.
DEADLOCK_ATTEMPTS = 3
DEADLOCK_DETECTED = "40P01"


def _retrying_deadlocks(work):
    """``work()``, one transaction of its own, run again when PostgreSQL ended it to break a
    deadlock. Inside a caller's transaction the caller's whole work was lost with it, so only
    the caller could run it again: the error is raised."""
    for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
        try:
            return work()
        except OperationalError as error:
            deadlocked = getattr(error.__cause__, "sqlstate", None) == DEADLOCK_DETECTED
            if not deadlocked or connection.in_atomic_block or attempt == DEADLOCK_ATTEMPTS:
                raise
            logger.warning("A deadlock ended a settlement transaction; running it again")


def _one_statement() -> bool:
    return connection.vendor == "postgresql" and settings.CREDITS_ONE_STATEMENT_SETTLEMENT


def _take_funds(*, account_id: int, amount_micros: int) -> bool:
    """Hold ``amount_micros`` if the account has it available.

    One conditional UPDATE takes the row lock, checks the funds and moves them, which is what
    select_for_update() followed by an F() update would do in two round trips on the hottest
    path of the gateway. The lock is held until the transaction ends.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Account._meta.db_table} SET held_micros = held_micros + %s "
            "WHERE id = %s AND balance_micros - held_micros >= %s",
            [amount_micros, account_id, amount_micros],
        )
        return cursor.rowcount == 1


def _take_funds_after_sweeping(*, account_id: int, amount_micros: int, now: datetime) -> None:
    account = _lock_accounts([account_id])[account_id]
    # Overdue holds of crashed calls must not block a paying caller.
    _expire_pending_holds(account=account, now=now)
    if account.available_micros < amount_micros:
        raise InsufficientCredits(
            f"Insufficient credits: this call costs {format_usd(amount_micros)} and "
            f"{format_usd(max(account.available_micros, 0))} is available",
            extra={"priceCents": micros_to_cents(amount_micros)},
        )
    Account.objects.filter(pk=account_id).update(held_micros=F("held_micros") + amount_micros)


def hold_reserve(
    *,
    account: Account | int,
    amount_micros: int,
    request_id: str,
    description: str = "",
    metadata: dict | None = None,
    ttl_seconds: int | None = None,
) -> Hold:
    """Reserve funds for one call, or raise InsufficientCredits (HTTP 402).

    Reserving the same request id twice returns the first hold.
    """
    if amount_micros < 0:
        raise InvalidRequest("A hold cannot be negative")
    account_id = account if isinstance(account, int) else account.pk
    now = timezone.now()
    ttl = ttl_seconds if ttl_seconds is not None else settings.HOLD_TTL_SECONDS
    hold = Hold(
        account_id=account_id,
        request_id=request_id,
        amount_micros=amount_micros,
        description=description,
        metadata=metadata or {},
        created_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )
    try:
        if _one_statement():
            with _savepoint_if_in_transaction():
                reserved = _retrying_deadlocks(lambda: settlement_sql.reserve(hold))
            if reserved:
                return hold
        _retrying_deadlocks(lambda: _reserve_with_row_locks(hold, now))
    except IntegrityError:
        existing = Hold.objects.filter(request_id=request_id).first()
        if existing is None:
            raise
        return existing
    return hold


def _reserve_with_row_locks(hold: Hold, now: datetime) -> None:
    with transaction.atomic():
        if not _take_funds(account_id=hold.account_id, amount_micros=hold.amount_micros):
            _take_funds_after_sweeping(
                account_id=hold.account_id, amount_micros=hold.amount_micros, now=now
            )
        hold.save(force_insert=True)


def _hold_for_settlement(*, request_id: str) -> Hold:
    hold = Hold.objects.filter(request_id=request_id).first()
    if hold is None:
        raise NotFound(f"No hold for request {request_id}")
    return hold


def fee_split(*, amount_micros: int, has_provider: bool) -> tuple[int, int]:
    """(provider revenue, platform fee); the fee rounds down in the provider's favour."""
    if not has_provider:
        return 0, amount_micros
    fee = amount_micros * settings.PLATFORM_FEE_BPS // 10_000
    return amount_micros - fee, fee


class _NoPlatformAccount(Exception):
    pass


def _lock_for_settlement(account_ids: list[int]) -> tuple[dict[int, int], int]:
    """Lock the given accounts and the platform account in id order; their balances and the
    platform account's id."""
    rows = list(
        _for_update(Account.objects)
        .filter(Q(pk__in=account_ids) | Q(kind=Account.Kind.PLATFORM))
        .order_by("pk")
        .values_list("pk", "kind", "balance_micros")
    )
    platform_id = next((pk for pk, kind, _ in rows if kind == Account.Kind.PLATFORM), None)
    if platform_id is None:
        raise _NoPlatformAccount
    return {pk: balance for pk, _, balance in rows}, platform_id


def hold_capture(
    *,
    amount_micros: int,
    provider_account: Account | int | None,
    description: str,
    request_id: str | None = None,
    hold: Hold | None = None,
    metadata: dict | None = None,
    also_record: UsageEvent | None = None,
) -> Hold:
    """Charge ``amount_micros`` (at most the hold) and release the rest of the hold.

    Books the caller's api_call debit, the provider's revenue and the platform fee as one event
    that sums to zero, and saves ``also_record`` (the call's usage event) in the same
    transaction. Capturing a captured hold changes nothing; a released or expired hold cannot
    be captured. Give the ``hold`` returned by hold_reserve, or its ``request_id``.
    """
    hold = hold or _hold_for_settlement(request_id=request_id)
    if not 0 <= amount_micros <= hold.amount_micros:
        raise InvalidRequest(
            f"Cannot capture {amount_micros} micro-dollars of a {hold.amount_micros} hold"
        )
    provider_id = provider_account.pk if isinstance(provider_account, Account) else provider_account
    now = timezone.now()
    if _one_statement():
        return _capture_in_one_statement(
            hold, amount_micros, provider_id, description, metadata, also_record, now
        )
    for _ in range(2):
        try:
            return _retrying_deadlocks(
                lambda: _capture(
                    hold, amount_micros, provider_id, description, metadata, also_record, now
                )
            )
        except _NoPlatformAccount:
            account_platform()
    raise RuntimeError("the platform account could not be created")


_platform_id: int | None = None


def _capture_legs(hold, amount_micros, provider_id, platform_id) -> list[Leg]:
    revenue, fee = fee_split(amount_micros=amount_micros, has_provider=provider_id is not None)
    legs = [
        Leg(hold.account_id, LedgerEntry.Type.API_CALL, -amount_micros, "caller"),
        Leg(platform_id, LedgerEntry.Type.FEE, fee, "platform"),
    ]
    if provider_id is not None:
        legs.append(Leg(provider_id, LedgerEntry.Type.REVENUE, revenue, "provider"))
    return legs


def _capture_in_one_statement(
    hold, amount_micros, provider_id, description, metadata, also_record, now
) -> Hold:
    global _platform_id
    for attempt in range(3):
        if _platform_id is None or attempt:
            _platform_id = account_platform().pk
        legs = _capture_legs(hold, amount_micros, provider_id, _platform_id)
        with _savepoint_if_in_transaction():
            outcome = _retrying_deadlocks(
                lambda legs=legs: settlement_sql.capture(
                    hold=hold,
                    amount_micros=amount_micros,
                    legs=[(leg.account_id, leg.type, leg.amount_micros, leg.role) for leg in legs],
                    description=description,
                    metadata={**hold.metadata, **(metadata or {}), "requestId": hold.request_id},
                    event_ref=f"call:{hold.request_id}",
                    now=now,
                    usage=also_record,
                )
            )
        if outcome is settlement_sql.CaptureOutcome.CAPTURED:
            hold.status, hold.captured_micros = Hold.Status.CAPTURED, amount_micros
            hold.settled_at = now
            return hold
        if outcome is settlement_sql.CaptureOutcome.NOT_PENDING:
            current = Hold.objects.get(pk=hold.pk)
            if current.status == Hold.Status.CAPTURED:
                return current
            raise Conflict(f"The hold of request {hold.request_id} was already {current.status}")
        # A remembered platform account that no longer exists (only a test's, rolled back):
        # nothing was written; find or create it again and retry.
    raise RuntimeError(f"could not capture the hold of request {hold.request_id}")


def _capture(hold, amount_micros, provider_id, description, metadata, also_record, now) -> Hold:
    with transaction.atomic():
        balances, platform_id = _lock_for_settlement(
            [hold.account_id] + ([provider_id] if provider_id else [])
        )
        claimed = Hold.objects.filter(pk=hold.pk, status=Hold.Status.PENDING).update(
            status=Hold.Status.CAPTURED, captured_micros=amount_micros, settled_at=now
        )
        if not claimed:
            current = Hold.objects.get(pk=hold.pk)
            if current.status == Hold.Status.CAPTURED:
                return current
            raise Conflict(f"The hold of request {hold.request_id} was already {current.status}")
        _book(
            legs=_capture_legs(hold, amount_micros, provider_id, platform_id),
            event_ref=f"call:{hold.request_id}",
            description=description,
            metadata={**hold.metadata, **(metadata or {}), "requestId": hold.request_id},
            now=now,
            balances=balances,
            held_released={hold.account_id: hold.amount_micros},
        )
        if also_record is not None:
            also_record.save(force_insert=True)
    hold.status, hold.captured_micros, hold.settled_at = Hold.Status.CAPTURED, amount_micros, now
    return hold


def hold_release(
    *,
    request_id: str | None = None,
    hold: Hold | None = None,
    also_record: UsageEvent | None = None,
) -> Hold:
    """Give a hold back in full. Releasing twice, or a hold that already expired, is a no-op.

    ``also_record`` (the failed call's usage event) is saved in the same transaction.
    """
    hold = hold or _hold_for_settlement(request_id=request_id)
    with transaction.atomic():
        _lock_accounts([hold.account_id])
        released = Hold.objects.filter(pk=hold.pk, status=Hold.Status.PENDING).update(
            status=Hold.Status.RELEASED, settled_at=timezone.now()
        )
        if released:
            Account.objects.filter(pk=hold.account_id).update(
                held_micros=F("held_micros") - hold.amount_micros
            )
            hold.status = Hold.Status.RELEASED
        else:
            hold = Hold.objects.get(pk=hold.pk)
            if hold.status == Hold.Status.CAPTURED:
                raise Conflict(f"The hold of request {hold.request_id} was already captured")
        if also_record is not None:
            also_record.save(force_insert=True)
    return hold


def holds_expire(*, now: datetime | None = None, account: Account | None = None) -> int:
    """The sweeper: expire every pending hold past its deadline. Returns how many expired."""
    now = now or timezone.now()
    overdue_accounts = Hold.objects.filter(status=Hold.Status.PENDING, expires_at__lt=now)
    if account is not None:
        overdue_accounts = overdue_accounts.filter(account=account)
    expired = 0
    for account_id in overdue_accounts.values_list("account_id", flat=True).distinct():
        with transaction.atomic():
            locked = _lock_accounts([account_id])[account_id]
            expired += _expire_pending_holds(account=locked, now=now)
    return expired


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


def usage_event_new(
    *,
    account_id: int,
    api_key_id: int | None,
    request_id: str,
    api_slug: str,
    path: str,
    method: str,
    status: str,
    mode: str,
    cost_micros: int,
    latency_ms: int,
    created_at: datetime | None = None,
    endpoint_id: int | None = None,
    params_fingerprint: str = "",
    billing_root_request_id: str = "",
) -> UsageEvent:
    """An unsaved usage event, for a service to save in its own transaction."""
    return UsageEvent(
        account_id=account_id,
        api_key_id=api_key_id,
        request_id=request_id,
        api_slug=api_slug,
        path=path,
        method=method,
        status=status,
        mode=mode,
        cost_micros=cost_micros,
        latency_ms=latency_ms,
        created_at=created_at or timezone.now(),
        endpoint_id=endpoint_id,
        params_fingerprint=params_fingerprint,
        billing_root_request_id=billing_root_request_id,
    )


def usage_event_record(*, account: Account, **fields) -> UsageEvent:
    event = usage_event_new(account_id=account.pk, **fields)
    event.save(force_insert=True)
    return event
