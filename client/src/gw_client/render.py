"""What gw prints: tables and colour on a terminal, plain aligned text when piped, answers on
stdout and everything else (spinner, hints, errors) on stderr."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Mapping
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

from gw_client.errors import GatewayError, UpstreamError


def _console(*, stderr: bool) -> Console:
    # Catalog texts may hold brackets and colons, which Rich would read as markup and emoji.
    console = Console(stderr=stderr, markup=False, emoji=False, highlight=False)
    if not console.is_terminal:
        # Piped output is read by grep and scripts: a row stays on one line, however long.
        console.width = 10_000
    return console


out = _console(stderr=False)
err = _console(stderr=True)


# Values


def dollars(amount: Decimal | str) -> str:
    """Dollars for people, such as "$0.0125" or "-$5.00": at least two decimals."""
    amount = Decimal(amount)
    digits = f"{abs(amount):.6f}".rstrip("0")
    whole, _, fraction = digits.partition(".")
    return f"{'-' if amount < 0 else ''}${whole}.{fraction.ljust(2, '0')}"


def dollars_from_cents(cents: float | int | str) -> str:
    return dollars(Decimal(str(cents)) / 100)


def price(text: str, unit: str | None = None) -> str:
    """A catalog price ("0.0025" in search, "$0.0025" elsewhere, or "dynamic") for people."""
    try:
        label = dollars(text.removeprefix("$"))
    except InvalidOperation:
        return text
    return f"{label}/{unit}" if unit and unit != "call" else label


def moment(timestamp: str) -> str:
    """An ISO 8601 time in the local time zone, to the second."""
    try:
        parsed = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return timestamp
    return parsed.astimezone().strftime("%Y-%m-%d %H:%M:%S")


# Output


def show(renderable: Any) -> None:
    """Print to stdout; piped, without the padding that aligns a terminal's right edge."""
    if out.is_terminal:
        out.print(renderable)
        return
    with out.capture() as captured:
        out.print(renderable)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def raw_json(answer: Any) -> None:
    """An answer as JSON on stdout: highlighted on a terminal, plain for jq."""
    text = json.dumps(answer, indent=2, ensure_ascii=False)
    if out.is_terminal:
        out.print_json(text)
    else:
        sys.stdout.write(text + "\n")


def table(*headers: str) -> Table:
    """Aligned columns; on a narrow terminal a long cell folds onto more lines, never cut."""
    columns = [Column(header, overflow="fold") for header in headers]
    if out.is_terminal:
        return Table(*columns, box=box.SIMPLE_HEAD, header_style="bold")
    return Table(*columns, box=None, pad_edge=False, header_style="")


def add_row(target: Table, *cells: Any) -> None:
    target.add_row(*(Text("" if cell is None else str(cell)) for cell in cells))


def fields(rows: Mapping[str, Any]) -> Table:
    """Labelled values, one a line."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for label, value in rows.items():
        if value not in (None, ""):
            grid.add_row(Text(label), Text(str(value)))
    return grid


def hint(text: str) -> None:
    err.print(Text(text, style="dim"))


@contextlib.contextmanager
def spinner(label: str) -> Iterator[None]:
    """A spinner on stderr while a call runs, on a terminal only."""
    if not err.is_terminal:
        yield
        return
    with err.status(Text(label), spinner="dots"):
        yield


def error(failure: GatewayError) -> None:
    """error: <message> (<CODE>, request <id>), on one line."""
    details = [failure.code] if failure.code else []
    if isinstance(failure, UpstreamError) and failure.upstream_status:
        details.append(f"provider status {failure.upstream_status}")
    if failure.request_id:
        details.append(f"request {failure.request_id}")
    line = " ".join(failure.message.split())
    if details:
        line += f" ({', '.join(details)})"
    problem(line)


def problem(line: str) -> None:
    err.print(Text("error: ", style="bold red") + Text(line))
