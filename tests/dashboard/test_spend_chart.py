from datetime import date, timedelta

import pytest

from credits.selectors import DailyUsage
from dashboard.charts import PLOT_HEIGHT, nice_ceiling, spend_chart


@pytest.mark.parametrize(
    ("micros", "ceiling"),
    [(0, 1), (1, 1), (7, 10), (12, 20), (45_000, 50_000), (50_000, 50_000), (120_001, 200_000)],
)
def test_the_scale_rounds_up_to_one_two_or_five(micros, ceiling):
    assert nice_ceiling(micros) == ceiling


def days(*spent):
    start = date(2025, 3, 1)
    return [DailyUsage(start + timedelta(days=i), 1 if s else 0, s) for i, s in enumerate(spent)]


def test_bars_are_proportional_to_spend_against_a_round_scale():
    chart = spend_chart(days(0, 25_000, 50_000))

    assert [bar.height for bar in chart.bars] == [0, PLOT_HEIGHT / 2, PLOT_HEIGHT]
    assert [tick.label for tick in chart.y_ticks] == ["$0.00", "$0.025", "$0.05"]
    assert chart.total_micros == 75_000


def test_a_window_without_spend_has_flat_bars_and_one_zero_tick():
    chart = spend_chart(days(0, 0, 0, 0, 0, 0, 0))
    assert {bar.height for bar in chart.bars} == {0}
    assert [tick.label for tick in chart.y_ticks] == ["$0.00"]


def test_a_long_window_labels_a_few_days_always_including_today():
    chart = spend_chart(days(*[0] * 90))
    assert 4 <= len(chart.x_labels) <= 8
    assert chart.x_labels[-1].label == "May 29"
