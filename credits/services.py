"""Every change to money. Each top-level service owns one short transaction that locks the
accounts it moves (in id order), updates them with F() and appends the ledger legs, in that
order. Nothing here calls the network. Locks are always taken account(s) first, then holds.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from credits.models import Account, Hold, LedgerEntry, UsageEvent
from gateway.errors import Conflict, InsufficientCredits, InvalidRequest, NotFound
from gateway.models import Organization, User
from gateway.money import format_usd, micros_to_cents


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


def _account_get_or_create(*, kind: str, **owner) -> Account:
    account = Account.objects.filter(kind=kind, **owner).first()
    if account:
        return account
    try:
        with transaction.atomic():
            return Account.objects.create(kind=kind, **owner)
    except IntegrityError:  # created concurrently; the unique owner constraint decided
        return Account.objects.get(kind=kind, **owner)


def _lock_accounts(account_ids) -> dict[int, Account]:
    locked = Account.objects.select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return {account.pk: account for account in locked}


def _book(
    *,
    legs: list[Leg],
    event_ref: str,
    description: str,
    metadata: dict,
    now: datetime,
    accounts: dict[int, Account],
) -> list[LedgerEntry]:
    """Append the legs of one event to locked accounts. The legs must sum to zero."""
    if sum(leg.amount_micros for leg in legs) != 0:
        raise ValueError(f"ledger event {event_ref} does not balance")
    entries = []
    for leg in legs:
        if leg.amount_micros == 0:
            continue
        account = accounts[leg.account_id]
        account.balance_micros += leg.amount_micros
        Account.objects.filter(pk=account.pk).update(
            balance_micros=F("balance_micros") + leg.amount_micros
        )
        entries.append(
            LedgerEntry(
                account=account,
                type=leg.type,
                amount_micros=leg.amount_micros,
                balance_after_micros=account.balance_micros,
                description=description,
                metadata=metadata,
                event_ref=event_ref,
                idempotency_ref=f"{event_ref}:{leg.role}",
                created_at=now,
            )
        )
    return LedgerEntry.objects.bulk_create(entries)


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
                accounts=accounts,
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
                accounts=accounts,
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
        Hold.objects.select_for_update()
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


def hold_reserve(
    *,
    account: Account,
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
    now = timezone.now()
    ttl = ttl_seconds if ttl_seconds is not None else settings.HOLD_TTL_SECONDS
    with transaction.atomic():
        account = _lock_accounts([account.pk])[account.pk]
        existing = Hold.objects.filter(request_id=request_id).first()
        if existing:
            return existing
        if account.available_micros < amount_micros:
            # Overdue holds of crashed calls must not block a paying caller.
            _expire_pending_holds(account=account, now=now)
        if account.available_micros < amount_micros:
            raise InsufficientCredits(
                f"Insufficient credits: this call costs {format_usd(amount_micros)} and "
                f"{format_usd(max(account.available_micros, 0))} is available",
                extra={"priceCents": micros_to_cents(amount_micros)},
            )
        hold = Hold.objects.create(
            account=account,
            request_id=request_id,
            amount_micros=amount_micros,
            description=description,
            metadata=metadata or {},
            created_at=now,
            expires_at=now + timedelta(seconds=ttl),
        )
        Account.objects.filter(pk=account.pk).update(held_micros=F("held_micros") + amount_micros)
    return hold


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


def hold_capture(
    *,
    request_id: str,
    amount_micros: int,
    provider_account: Account | None,
    description: str,
    metadata: dict | None = None,
) -> Hold:
    """Charge ``amount_micros`` (at most the hold) and release the rest of the hold.

    Books the caller's api_call debit, the provider's revenue and the platform fee as one event
    that sums to zero. Capturing a captured hold changes nothing; a released or expired hold
    cannot be captured.
    """
    hold = _hold_for_settlement(request_id=request_id)
    if not 0 <= amount_micros <= hold.amount_micros:
        raise InvalidRequest(
            f"Cannot capture {amount_micros} micro-dollars of a {hold.amount_micros} hold"
        )
    platform = account_platform()
    account_ids = [hold.account_id, platform.pk]
    if provider_account is not None:
        account_ids.append(provider_account.pk)
    now = timezone.now()
    with transaction.atomic():
        accounts = _lock_accounts(account_ids)
        hold = Hold.objects.select_for_update().get(pk=hold.pk)
        if hold.status == Hold.Status.CAPTURED:
            return hold
        if hold.status != Hold.Status.PENDING:
            raise Conflict(f"The hold of request {request_id} was already {hold.status}")
        Account.objects.filter(pk=hold.account_id).update(
            held_micros=F("held_micros") - hold.amount_micros
        )
        accounts[hold.account_id].held_micros -= hold.amount_micros
        revenue, fee = fee_split(
            amount_micros=amount_micros, has_provider=provider_account is not None
        )
        legs = [
            Leg(hold.account_id, LedgerEntry.Type.API_CALL, -amount_micros, "caller"),
            Leg(platform.pk, LedgerEntry.Type.FEE, fee, "platform"),
        ]
        if provider_account is not None:
            legs.append(Leg(provider_account.pk, LedgerEntry.Type.REVENUE, revenue, "provider"))
        _book(
            legs=legs,
            event_ref=f"call:{request_id}",
            description=description,
            metadata={**hold.metadata, **(metadata or {}), "requestId": request_id},
            now=now,
            accounts=accounts,
        )
        hold.status = Hold.Status.CAPTURED
        hold.captured_micros = amount_micros
        hold.settled_at = now
        hold.save(update_fields=["status", "captured_micros", "settled_at"])
    return hold


def hold_release(*, request_id: str) -> Hold:
    """Give a hold back in full. Releasing twice, or a hold that already expired, is a no-op."""
    hold = _hold_for_settlement(request_id=request_id)
    with transaction.atomic():
        _lock_accounts([hold.account_id])
        hold = Hold.objects.select_for_update().get(pk=hold.pk)
        if hold.status in (Hold.Status.RELEASED, Hold.Status.EXPIRED):
            return hold
        if hold.status == Hold.Status.CAPTURED:
            raise Conflict(f"The hold of request {request_id} was already captured")
        hold.status = Hold.Status.RELEASED
        hold.settled_at = timezone.now()
        hold.save(update_fields=["status", "settled_at"])
        Account.objects.filter(pk=hold.account_id).update(
            held_micros=F("held_micros") - hold.amount_micros
        )
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
                accounts=accounts,
            )
    except IntegrityError as error:
        if LedgerEntry.objects.filter(event_ref=refund_ref).exists():
            raise Conflict("This call was already refunded") from None
        if "account_balance_not_negative" in str(error):
            raise Conflict(
                "The provider's balance no longer covers the revenue to reverse"
            ) from None
        raise


def usage_event_record(
    *,
    account: Account,
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
    endpoint=None,
    params_fingerprint: str = "",
    billing_root_request_id: str = "",
) -> UsageEvent:
    return UsageEvent.objects.create(
        account=account,
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
        endpoint=endpoint,
        params_fingerprint=params_fingerprint,
        billing_root_request_id=billing_root_request_id,
    )
