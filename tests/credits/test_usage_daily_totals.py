from datetime import UTC, date, datetime, timedelta

from credits.selectors import (
    DailyUsage,
    usage_daily_totals,
    usage_events_for_account,
    usage_window_start,
)
from credits.services.accounts import account_for_user
from tests.dashboard.helpers import record_call

NOW = datetime(2025, 3, 10, 15, 30, tzinfo=UTC)


def test_the_window_starts_at_midnight_of_its_first_day():
    assert usage_window_start(days=7, now=NOW) == datetime(2025, 3, 4, tzinfo=UTC)
    assert usage_window_start(days=1, now=NOW) == datetime(2025, 3, 10, tzinfo=UTC)


def test_every_day_of_the_window_has_a_row_and_quiet_days_are_zero(
    alice, django_assert_num_queries
):
    account = account_for_user(user=alice.user)
    record_call(account, cost=40_000, at=NOW - timedelta(hours=1))
    record_call(account, cost=2_500, at=NOW - timedelta(hours=2))
    record_call(account, cost=7_000, at=datetime(2025, 3, 8, 0, 0, tzinfo=UTC))
    record_call(account, cost=99_000, at=datetime(2025, 3, 3, 23, 59, 59, tzinfo=UTC))
    events = usage_events_for_account(account=account, since=usage_window_start(days=7, now=NOW))

    with django_assert_num_queries(1):
        days = usage_daily_totals(events=events, days=7, now=NOW)

    assert days == [
        DailyUsage(date(2025, 3, 4), 0, 0),
        DailyUsage(date(2025, 3, 5), 0, 0),
        DailyUsage(date(2025, 3, 6), 0, 0),
        DailyUsage(date(2025, 3, 7), 0, 0),
        DailyUsage(date(2025, 3, 8), 1, 7_000),
        DailyUsage(date(2025, 3, 9), 0, 0),
        DailyUsage(date(2025, 3, 10), 2, 42_500),
    ]


def test_days_follow_the_current_time_zone(alice, settings):
    settings.TIME_ZONE = "America/New_York"
    account = account_for_user(user=alice.user)
    # 02:00 UTC on the 10th is still the evening of the 9th in New York.
    record_call(account, cost=5_000, at=datetime(2025, 3, 10, 2, 0, tzinfo=UTC))
    events = usage_events_for_account(account=account, since=usage_window_start(days=2, now=NOW))

    days = usage_daily_totals(events=events, days=2, now=NOW)

    assert days == [DailyUsage(date(2025, 3, 9), 1, 5_000), DailyUsage(date(2025, 3, 10), 0, 0)]


def test_only_the_given_events_are_counted(alice, bob):
    mine = account_for_user(user=alice.user)
    record_call(mine, api="hunter", cost=1_000, at=NOW)
    record_call(mine, api="clearbit", cost=9_000, at=NOW)
    record_call(account_for_user(user=bob.user), api="hunter", cost=5_000, at=NOW)
    events = usage_events_for_account(
        account=mine, since=usage_window_start(days=1, now=NOW), api_slug="hunter"
    )

    assert usage_daily_totals(events=events, days=1, now=NOW) == [
        DailyUsage(date(2025, 3, 10), 1, 1_000)
    ]
