"""Geometry of the daily spend chart, drawn by templates/dashboard/_spend_chart.html as inline SVG.

A handful of rectangles and labels needs no charting library: the server computes them, so the
chart reads without JavaScript and each bar's <title> is its native tooltip.
"""

import math
from dataclasses import dataclass
from datetime import date

from credits.selectors import DailyUsage
from gateway.money import format_usd

WIDTH, HEIGHT = 720, 220
LEFT, RIGHT, TOP, BOTTOM = 64, 28, 12, 28
PLOT_WIDTH, PLOT_HEIGHT = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
MOST_DAY_LABELS = 8


@dataclass(frozen=True)
class Bar:
    day: date
    calls: int
    spent_micros: int
    x: float
    y: float
    width: float
    height: float
    slot_x: float
    slot_width: float

    @property
    def title(self) -> str:
        calls = "1 call" if self.calls == 1 else f"{self.calls} calls"
        return f"{self.day:%a %d %b %Y}: {format_usd(self.spent_micros)} over {calls}"


@dataclass(frozen=True)
class Tick:
    label: str
    x: float
    y: float


@dataclass(frozen=True)
class SpendChart:
    bars: list[Bar]
    y_ticks: list[Tick]
    x_labels: list[Tick]
    total_micros: int
    total_calls: int
    width: int = WIDTH
    height: int = HEIGHT
    plot_left: int = LEFT
    plot_right: int = WIDTH - RIGHT
    baseline_y: int = TOP + PLOT_HEIGHT

    @property
    def summary(self) -> str:
        first, last = self.bars[0].day, self.bars[-1].day
        return (
            f"Spend per day from {first:%d %b %Y} to {last:%d %b %Y}: "
            f"{format_usd(self.total_micros)} in total over {self.total_calls} calls."
        )


def nice_ceiling(micros: int) -> int:
    """The smallest 1, 2 or 5 times a power of ten at or above ``micros`` (at least 1)."""
    if micros <= 1:
        return 1
    magnitude = 10 ** math.floor(math.log10(micros))
    for step in (1, 2, 5):
        if step * magnitude >= micros:
            return step * magnitude
    return 10 * magnitude


def spend_chart(days: list[DailyUsage]) -> SpendChart:
    most = max((day.spent_micros for day in days), default=0)
    scale = nice_ceiling(most)
    slot = PLOT_WIDTH / len(days)
    bar_width = max(slot * 0.7, 1.0)
    bars = []
    for index, day in enumerate(days):
        height = PLOT_HEIGHT * day.spent_micros / scale
        slot_x = LEFT + index * slot
        bars.append(
            Bar(
                day=day.day,
                calls=day.calls,
                spent_micros=day.spent_micros,
                x=round(slot_x + (slot - bar_width) / 2, 2),
                y=round(TOP + PLOT_HEIGHT - height, 2),
                width=round(bar_width, 2),
                height=round(height, 2),
                slot_x=round(slot_x, 2),
                slot_width=round(slot, 2),
            )
        )
    tick_values = sorted({0, scale // 2, scale}) if most else [0]
    y_ticks = [
        Tick(
            label=format_usd(value), x=LEFT - 6, y=round(TOP + PLOT_HEIGHT * (1 - value / scale), 2)
        )
        for value in tick_values
    ]
    # Label about MOST_DAY_LABELS days, always including today (the last bar).
    step = math.ceil(len(days) / MOST_DAY_LABELS)
    x_labels = [
        Tick(label=f"{bar.day:%b} {bar.day.day}", x=round(bar.slot_x + slot / 2, 2), y=HEIGHT - 8)
        for index, bar in enumerate(bars)
        if (len(bars) - 1 - index) % step == 0
    ]
    return SpendChart(
        bars=bars,
        y_ticks=y_ticks,
        x_labels=x_labels,
        total_micros=sum(day.spent_micros for day in days),
        total_calls=sum(day.calls for day in days),
    )
