"""Holds: a paid call reserves funds before it calls the provider and captures or releases them
after, each in one short transaction; a hold a crash leaves behind expires and is released.

On PostgreSQL, reserve and capture are each one statement (credits.settlement_sql) unless
CREDITS_ONE_STATEMENT_SETTLEMENT is off; elsewhere they are portable ORM transactions. Locks are
always taken account(s) first, then holds.
"""

import logging
from contextlib import nullcontext
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from credits import settlement_sql
from credits.models import Account, Hold, LedgerEntry, UsageEvent
from credits.services.accounts import (
    _for_update,
    _lock_accounts,
    _platform_account_id,
    account_platform,
)
from credits.services.ledger import Leg, _book, _lock_and_roll_up, _roll_up_locked, fee_split
from gateway.errors import Conflict, InsufficientCredits, InvalidRequest, NotFound
from gateway.money import format_usd, micros_to_cents

logger = logging.getLogger("credits")

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


def _savepoint_if_in_transaction():
    """A single statement is atomic on its own; inside a caller's transaction, a savepoint keeps
    its failure from aborting that transaction."""
    return transaction.atomic() if connection.in_atomic_block else nullcontext()


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


def _take_funds(*, account_id: int, amount_micros: int) -> bool:
    """Hold ``amount_micros`` if the account has it available.

    One conditional UPDATE takes the row lock, checks the funds and moves them, which is what
    select_for_update() followed by an F() update would do in two round trips on the hottest
    path of the gateway. The lock is held until the transaction ends.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Account._meta.db_table} SET held_micros = held_micros + %s "
            "WHERE id = %s AND rolled_up_micros - held_micros >= %s",
            [amount_micros, account_id, amount_micros],
        )
        return cursor.rowcount == 1


def _take_funds_after_sweeping(*, account_id: int, amount_micros: int, now: datetime) -> None:
    account = _lock_accounts([account_id])[account_id]
    # Overdue holds of crashed calls must not block a paying caller, and revenue waiting for
    # the roll-up is the caller's to spend.
    _expire_pending_holds(account=account, now=now)
    _roll_up_locked(account)
    available = account.rolled_up_micros - account.held_micros
    if available < amount_micros:
        raise InsufficientCredits(
            f"Insufficient credits: this call costs {format_usd(amount_micros)} and "
            f"{format_usd(max(available, 0))} is available",
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


def hold_capture(
    *,
    amount_micros: int,
    provider_account: Account | int | None,
    description: str,
    request_id: str | None = None,
    hold: Hold | None = None,
    metadata: dict | None = None,
    usage: UsageEvent | None = None,
) -> Hold:
    """Charge ``amount_micros`` (at most the hold) and release the rest of the hold.

    Books the caller's api_call debit, the provider's revenue and the platform fee as one event
    that sums to zero, and saves ``usage`` (the call's usage event) in the same transaction.
    Only the caller's account is locked: the revenue and the fee are receipts.
    Capturing a captured hold changes nothing; a released or expired hold cannot be captured.
    Give the ``hold`` returned by hold_reserve, or its ``request_id``.
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
            hold, amount_micros, provider_id, description, metadata, usage, now
        )
    return _retrying_deadlocks(
        lambda: _capture(hold, amount_micros, provider_id, description, metadata, usage, now)
    )


def _capture_receipts(amount_micros, provider_id, platform_id) -> list[Leg]:
    """The provider's revenue and the platform's fee of a charge of ``amount_micros``."""
    revenue, fee = fee_split(amount_micros=amount_micros, has_provider=provider_id is not None)
    receipts = [Leg(platform_id, LedgerEntry.Type.FEE, fee, "platform")]
    if provider_id is not None:
        receipts.append(Leg(provider_id, LedgerEntry.Type.REVENUE, revenue, "provider"))
    return receipts


def _capture_in_one_statement(
    hold, amount_micros, provider_id, description, metadata, usage, now
) -> Hold:
    for attempt in range(3):
        platform_id = _platform_account_id(look_up_again=attempt > 0)
        receipts = _capture_receipts(amount_micros, provider_id, platform_id)
        with _savepoint_if_in_transaction():
            outcome = _retrying_deadlocks(
                lambda receipts=receipts: settlement_sql.capture(
                    settlement_sql.capture_statement(
                        hold=hold,
                        amount_micros=amount_micros,
                        receipts=[
                            (leg.account_id, leg.type, leg.amount_micros, leg.role)
                            for leg in receipts
                        ],
                        description=description,
                        metadata={
                            **hold.metadata,
                            **(metadata or {}),
                            "requestId": hold.request_id,
                        },
                        event_ref=f"call:{hold.request_id}",
                        now=now,
                        usage=usage,
                    )
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


def _capture(hold, amount_micros, provider_id, description, metadata, usage, now) -> Hold:
    platform_id = account_platform().pk
    with transaction.atomic():
        caller = _lock_and_roll_up([hold.account_id])
        claimed = Hold.objects.filter(pk=hold.pk, status=Hold.Status.PENDING).update(
            status=Hold.Status.CAPTURED, captured_micros=amount_micros, settled_at=now
        )
        if not claimed:
            current = Hold.objects.get(pk=hold.pk)
            if current.status == Hold.Status.CAPTURED:
                return current
            raise Conflict(f"The hold of request {hold.request_id} was already {current.status}")
        _book(
            legs=[Leg(hold.account_id, LedgerEntry.Type.API_CALL, -amount_micros, "caller")],
            receipts=_capture_receipts(amount_micros, provider_id, platform_id),
            event_ref=f"call:{hold.request_id}",
            description=description,
            metadata={**hold.metadata, **(metadata or {}), "requestId": hold.request_id},
            now=now,
            balances={hold.account_id: caller[hold.account_id].rolled_up_micros},
            held_released={hold.account_id: hold.amount_micros},
        )
        if usage is not None:
            usage.save(force_insert=True)
    hold.status, hold.captured_micros, hold.settled_at = Hold.Status.CAPTURED, amount_micros, now
    return hold


def hold_release(
    *,
    request_id: str | None = None,
    hold: Hold | None = None,
    usage: UsageEvent | None = None,
) -> Hold:
    """Give a hold back in full. Releasing twice, or a hold that already expired, is a no-op.

    ``usage`` (the failed call's usage event) is saved in the same transaction.
    """
    hold = hold or _hold_for_settlement(request_id=request_id)
    # Under load a release meets captures of the same account and, now and then, a deadlock.
    return _retrying_deadlocks(lambda: _release(hold, usage))


def _release(hold: Hold, usage: UsageEvent | None) -> Hold:
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
        if usage is not None:
            usage.save(force_insert=True)
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
