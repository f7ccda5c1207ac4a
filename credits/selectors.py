from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone

from credits.models import Account, Hold, LedgerEntry, UsageEvent


def usage_events_in_window(*, account: Account, days: int, now: datetime | None = None) -> QuerySet:
    since = (now or timezone.now()) - timedelta(days=days)
    return UsageEvent.objects.filter(account=account, created_at__gte=since).order_by(
        "-created_at", "-id"
    )


def usage_window_totals(*, events: QuerySet) -> tuple[int, int]:
    """(number of events, micro-dollars spent) over a window of usage events."""
    totals = events.order_by().aggregate(total=Count("id"), spent=Coalesce(Sum("cost_micros"), 0))
    return totals["total"], totals["spent"]


def ledger_entries_for_account(*, account: Account) -> QuerySet:
    return LedgerEntry.objects.filter(account=account).order_by("-created_at", "-id")


def account_has_overdue_holds(*, account: Account, now: datetime | None = None) -> bool:
    return Hold.objects.filter(
        account=account, status=Hold.Status.PENDING, expires_at__lt=now or timezone.now()
    ).exists()


@dataclass(frozen=True)
class LedgerDrift:
    kind: str
    subject: str
    expected: int
    actual: int

    def __str__(self):
        return f"{self.kind} {self.subject}: expected {self.expected}, found {self.actual}"


def ledger_discrepancies() -> list[LedgerDrift]:
    """Every way the books disagree with themselves; an empty list means they are clean.

    Checks, for every account, that the cached balance equals the sum of its entries and the
    held amount equals its pending holds; that every business event sums to zero; and that the
    last entry of each account carries the account's balance.
    """
    drifts: list[LedgerDrift] = []
    entries = LedgerEntry.objects.filter(account=OuterRef("pk"))
    accounts = Account.objects.annotate(
        entries_sum=Coalesce(
            Subquery(
                entries.order_by().values("account").annotate(s=Sum("amount_micros")).values("s")
            ),
            0,
        ),
        last_balance_after=Subquery(entries.order_by("-id").values("balance_after_micros")[:1]),
    ).order_by("pk")
    pending = dict(
        Hold.objects.filter(status=Hold.Status.PENDING)
        .values("account_id")
        .annotate(total=Sum("amount_micros"))
        .values_list("account_id", "total")
    )
    for account in accounts:
        if account.entries_sum != account.balance_micros:
            drifts.append(
                LedgerDrift(
                    "balance",
                    f"account {account.pk} ({account})",
                    account.entries_sum,
                    account.balance_micros,
                )
            )
        if pending.get(account.pk, 0) != account.held_micros:
            drifts.append(
                LedgerDrift(
                    "held",
                    f"account {account.pk} ({account})",
                    pending.get(account.pk, 0),
                    account.held_micros,
                )
            )
        last = account.last_balance_after
        if last is not None and last != account.balance_micros:
            drifts.append(
                LedgerDrift(
                    "balance_after",
                    f"account {account.pk} ({account})",
                    account.balance_micros,
                    last,
                )
            )
    unbalanced = (
        LedgerEntry.objects.values("event_ref")
        .annotate(total=Sum("amount_micros"))
        .filter(~Q(total=0))
        .order_by("event_ref")
    )
    for event in unbalanced:
        drifts.append(LedgerDrift("event", event["event_ref"], 0, event["total"]))
    return drifts
