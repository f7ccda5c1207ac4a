from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Sum, TextField, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from credits.models import Account, Hold, LedgerEntry, Purchase, UsageEvent


def usage_events_in_window(*, account: Account, days: int, now: datetime | None = None) -> QuerySet:
    since = (now or timezone.now()) - timedelta(days=days)
    return UsageEvent.objects.filter(account=account, created_at__gte=since).order_by(
        "-created_at", "-id"
    )


def usage_window_totals(*, events: QuerySet) -> tuple[int, int]:
    """(number of events, micro-dollars spent) over a window of usage events."""
    totals = events.order_by().aggregate(total=Count("id"), spent=Coalesce(Sum("cost_micros"), 0))
    return totals["total"], totals["spent"]


def usage_window_start(*, days: int, now: datetime | None = None) -> datetime:
    """Midnight (current time zone) of the first of ``days`` calendar days ending today.

    The dashboard counts whole days, unlike the rolling ``days`` of the usage API, so that the
    daily bars of a window add up to its totals.
    """
    today = timezone.localdate(now or timezone.now())
    first_day = today - timedelta(days=days - 1)
    return datetime.combine(first_day, time.min, tzinfo=timezone.get_current_timezone())


def usage_events_for_account(
    *, account: Account, since: datetime, api_slug: str = "", status: str = ""
) -> QuerySet:
    events = UsageEvent.objects.filter(account=account, created_at__gte=since)
    if api_slug:
        events = events.filter(api_slug=api_slug)
    if status:
        events = events.filter(status=status)
    return events.order_by("-created_at", "-id")


def usage_api_slugs(*, account: Account) -> list[str]:
    """The APIs an account has ever called, alphabetically (for filter choices)."""
    return list(
        UsageEvent.objects.filter(account=account)
        .order_by("api_slug")
        .values_list("api_slug", flat=True)
        .distinct()
    )


@dataclass(frozen=True)
class DailyUsage:
    day: date
    calls: int
    spent_micros: int


def usage_daily_totals(
    *, events: QuerySet, days: int, now: datetime | None = None
) -> list[DailyUsage]:
    """Calls and spend per calendar day for the ``days`` days ending today, oldest first.

    One grouped query; a day without calls is a zero, so every day of the window has a row.
    Days are those of the current time zone (UTC unless settings say otherwise).
    """
    now = now or timezone.now()
    since = usage_window_start(days=days, now=now)
    rows = (
        events.filter(created_at__gte=since)
        .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .values("day")
        .annotate(calls=Count("id"), spent=Coalesce(Sum("cost_micros"), 0))
        .order_by("day")
    )
    by_day = {row["day"]: row for row in rows}
    first_day = since.date()
    window = [first_day + timedelta(days=offset) for offset in range(days)]
    return [
        DailyUsage(
            day=day,
            calls=by_day[day]["calls"] if day in by_day else 0,
            spent_micros=by_day[day]["spent"] if day in by_day else 0,
        )
        for day in window
    ]


def ledger_entries_for_account(*, account: Account) -> QuerySet:
    return LedgerEntry.objects.filter(account=account).order_by("-created_at", "-id")


def holds_pending_for_account(*, account: Account) -> QuerySet:
    return Hold.objects.filter(account=account, status=Hold.Status.PENDING).order_by(
        "-created_at", "-id"
    )


@dataclass(frozen=True)
class ApiRevenue:
    api: str
    calls: int
    revenue_micros: int


def revenue_by_api(*, account: Account) -> list[ApiRevenue]:
    """Net revenue an account earned per API (the ``api`` of each leg's metadata), highest first.

    Revenue legs count positive; refunds reversing them are the account's negative ``refund``
    legs (a caller's refund is positive) and count against the same API. ``calls`` counts the
    charged calls and rail payments that paid revenue. Legs without an ``api`` are grouped under "".
    """
    earned = Q(type__in=[LedgerEntry.Type.REVENUE, LedgerEntry.Type.RAIL_REVENUE])
    reversed_revenue = Q(type=LedgerEntry.Type.REFUND, amount_micros__lt=0)
    rows = (
        LedgerEntry.objects.filter(Q(account=account) & (earned | reversed_revenue))
        .annotate(
            api=Coalesce(KeyTextTransform("api", "metadata"), Value(""), output_field=TextField())
        )
        .values("api")
        .annotate(
            calls=Count("id", filter=earned),
            revenue=Sum("amount_micros"),
        )
        .order_by("-revenue", "api")
    )
    return [
        ApiRevenue(api=row["api"], calls=row["calls"], revenue_micros=row["revenue"])
        for row in rows
    ]


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

    Checks, for every account, that the rolled-up balance equals the sum of its rolled-up
    entries (so that the balance, rolled up plus receipts waiting, equals the sum of all its
    entries) and the held amount equals its pending holds; and that every business event sums
    to zero. Each check is one statement, so it reads one consistent state of the books while
    calls and the roll-up go on.
    """
    drifts: list[LedgerDrift] = []
    rolled_up_entries = (
        LedgerEntry.objects.filter(account=OuterRef("pk"), rolled_up=True)
        .order_by()
        .values("account")
        .annotate(s=Sum("amount_micros"))
        .values("s")
    )
    pending_holds = (
        Hold.objects.filter(account=OuterRef("pk"), status=Hold.Status.PENDING)
        .order_by()
        .values("account")
        .annotate(s=Sum("amount_micros"))
        .values("s")
    )
    accounts = Account.objects.annotate(
        entries_sum=Coalesce(Subquery(rolled_up_entries), 0),
        pending_holds=Coalesce(Subquery(pending_holds), 0),
    ).order_by("pk")
    for account in accounts:
        if account.entries_sum != account.rolled_up_micros:
            drifts.append(
                LedgerDrift(
                    "balance",
                    f"account {account.pk} ({account})",
                    account.entries_sum,
                    account.rolled_up_micros,
                )
            )
        if account.pending_holds != account.held_micros:
            drifts.append(
                LedgerDrift(
                    "held",
                    f"account {account.pk} ({account})",
                    account.pending_holds,
                    account.held_micros,
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


def purchases_for_account(*, account: Account) -> QuerySet:
    return Purchase.objects.filter(account=account).order_by("-created_at", "-id")


def purchase_with_owner(*, purchase_id: int) -> Purchase | None:
    """The purchase with its account's owner (user or organization), or None."""
    return (
        Purchase.objects.select_related("account__user", "account__organization")
        .filter(pk=purchase_id)
        .first()
    )


def purchase_entries(*, purchase: Purchase) -> QuerySet:
    """The buyer's ledger entries of a purchase and of everything that took it back, oldest
    first."""
    return LedgerEntry.objects.filter(
        Q(event_ref=purchase.event_ref)
        | Q(event_ref__startswith=f"refund:purchase:{purchase.pk}:"),
        account_id=purchase.account_id,
    ).order_by("created_at", "id")
