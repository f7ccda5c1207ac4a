"""gw: find, price and call third-party APIs through the gateway, from a terminal or a script."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from gw_client import render
from gw_client.client import Gateway, Json
from gw_client.errors import (
    AuthError,
    GatewayError,
    InsufficientCredits,
    InvalidRequest,
    NetworkError,
    NotFound,
    UpstreamError,
)
from gw_client.mcp_stdio import mcp_url_for, serve_stdio
from gw_client.version import __version__


class ExitCode(IntEnum):
    OK = 0
    OTHER = 1
    USAGE = 2
    AUTH = 3
    INSUFFICIENT_CREDITS = 4
    NOT_FOUND = 5
    UPSTREAM = 6
    NETWORK = 7


EXIT_CODE_BY_ERROR: dict[type[GatewayError], ExitCode] = {
    InvalidRequest: ExitCode.USAGE,
    AuthError: ExitCode.AUTH,
    InsufficientCredits: ExitCode.INSUFFICIENT_CREDITS,
    NotFound: ExitCode.NOT_FOUND,
    UpstreamError: ExitCode.UPSTREAM,
    NetworkError: ExitCode.NETWORK,
}

HELP = """\
Find, price and call third-party APIs through the gateway with one key.

Set your key once (or pass --key); a gw_test_ key calls the sandbox for free:
  export GATEWAY_API_KEY=gw_live_...

Then, from a need to an answer:
  gw search find the email addresses of people at a company domain
  gw endpoint hunter /v2/domain-search     its parameters, price and run line
  gw run hunter /v2/domain-search -q domain=stripe.com -q limit=5
  gw usage --days 7                        what you called and what it cost
  gw balance
  gw mcp                                   the same tools for a local agent (MCP)

Add --json, before or after the command, for the gateway's raw JSON answer.
"""

EPILOG = """\
Exit codes:
  0  ok
  1  any other failure
  2  usage error, or the gateway refused the request as invalid
  3  no key, a bad key, or a key not allowed to do this
  4  not enough credits
  5  unknown API or endpoint
  6  the provider failed or refused
  7  the gateway could not be reached or did not answer in time
"""

app = typer.Typer(
    name="gw",
    help=HELP,
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Longer than the 60 s the gateway gives a provider (UPSTREAM_TIMEOUT_CAP_SECONDS): a slow paid
# call is then shown with its answer, not reported as a timeout after it was charged.
TIMEOUT = 75

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print the raw JSON answer only (for scripts and jq).")
]
Method = Annotated[
    str | None,
    typer.Option("--method", "-m", help="HTTP method, only when the path has several."),
]


@dataclass
class Settings:
    key: str | None
    base_url: str | None
    json: bool


def _print_version(value: bool) -> None:
    if value:
        render.show(f"gw {__version__}")
        raise typer.Exit()


@app.callback()
def global_options(
    ctx: typer.Context,
    key: Annotated[
        str | None,
        typer.Option(
            "--key",
            envvar="GATEWAY_API_KEY",
            show_envvar=True,
            help="Your gateway API key.",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            envvar="GATEWAY_BASE_URL",
            show_envvar=True,
            help="The gateway's address (default http://127.0.0.1:8000).",
        ),
    ] = None,
    json_output: JsonFlag = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print gw's version."
        ),
    ] = False,
) -> None:
    ctx.obj = Settings(key=key, base_url=base_url, json=json_output)


def _call(ctx: typer.Context, label: str, operation: Callable[[Gateway], Json]) -> Json:
    """Run one gateway operation with a spinner; a failure becomes its line and exit code."""
    settings: Settings = ctx.obj
    if not settings.key:
        render.problem(
            "no API key: export GATEWAY_API_KEY=gw_live_... (or gw_test_...) or pass --key"
        )
        raise typer.Exit(ExitCode.AUTH)
    try:
        with (
            Gateway(api_key=settings.key, base_url=settings.base_url, timeout=TIMEOUT) as gateway,
            render.spinner(label),
        ):
            return operation(gateway)
    except GatewayError as failure:
        render.error(failure)
        raise typer.Exit(_exit_code(failure)) from None


def _exit_code(failure: GatewayError) -> ExitCode:
    for error_class, code in EXIT_CODE_BY_ERROR.items():
        if isinstance(failure, error_class):
            return code
    return ExitCode.OTHER


def _as_json(ctx: typer.Context, json_output: bool, answer: Any) -> bool:
    """Print the raw answer when --json was given, anywhere on the line."""
    if json_output or ctx.obj.json:
        render.raw_json(answer)
        return True
    return False


def _run_command(slug: str, path: str, runnable: dict | None) -> str:
    """The gw run line matching details' usage.runApi, with its example values."""
    runnable = runnable or {}
    words = ["gw", "run", runnable.get("api", slug), runnable.get("path", path)]
    for name, value in (runnable.get("query") or {}).items():
        for item in value if isinstance(value, list) else [value]:
            words += ["-q", f"{name}={item}"]
    for name, value in (runnable.get("pathParams") or {}).items():
        words += ["--path-param", f"{name}={value}"]
    if runnable.get("body") is not None:
        words += ["--body", json.dumps(runnable["body"], ensure_ascii=False)]
    if runnable.get("method"):
        words += ["--method", runnable["method"]]
    return shlex.join(words)


def _runnable(run_api_text: str | None) -> dict | None:
    """The JSON request of details' usage.runApi ("POST <base>/v1/run {...}")."""
    _, found, payload = (run_api_text or "").partition("/v1/run ")
    try:
        return json.loads(payload) if found else None
    except ValueError:
        return None


def _pairs(values: list[str], option: str) -> dict[str, Any]:
    """name=value options; a name given twice becomes a list of its values."""
    pairs: dict[str, Any] = {}
    for item in values:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise typer.BadParameter(f"{item!r} is not name=value", param_hint=option)
        if name in pairs:
            previous = pairs[name]
            pairs[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            pairs[name] = value
    return pairs


def _body(text: str | None) -> Any:
    if text is None:
        return None
    if text.startswith("@"):
        source = text[1:]
        try:
            text = sys.stdin.read() if source == "-" else Path(source).read_text()
        except OSError as failure:
            raise typer.BadParameter(
                f"cannot read {source}: {failure.strerror}", param_hint="--body"
            ) from None
    try:
        return json.loads(text)
    except ValueError as failure:
        raise typer.BadParameter(f"not JSON: {failure}", param_hint="--body") from None


# Discovery


@app.command()
def search(
    ctx: typer.Context,
    need: Annotated[
        list[str], typer.Argument(metavar="NEED", help="What you need, in plain words.")
    ],
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", min=1, max=50, help="Endpoints to show, 1-50 (10)."),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Find endpoints that answer a need described in plain words, best first."""
    prompt = " ".join(need)
    answer = _call(ctx, "Searching the catalog", lambda gateway: gateway.search(prompt, limit))
    if _as_json(ctx, json_output, answer):
        return
    if not answer["results"]:
        render.hint("No endpoint matches; try other words.")
        return
    rows = render.table("API", "Method", "Path", "Price", "Score", "Description")
    for api in answer["results"]:
        for endpoint in api["endpoints"]:
            render.add_row(
                rows,
                api["slug"],
                endpoint["method"],
                endpoint["path"],
                render.price(endpoint["price"]),
                f"{endpoint['score']:.2f}",
                endpoint.get("description"),
            )
    render.show(rows)
    render.hint("Next: gw endpoint <API> <Path> shows its parameters and price.")


@app.command()
def providers(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=500, help="APIs per page, 1-500.")
    ] = 100,
    offset: Annotated[int, typer.Option("--offset", min=0, help="APIs to skip.")] = 0,
    json_output: JsonFlag = False,
) -> None:
    """List the catalog's APIs (the providers), a page at a time, by slug."""
    answer = _call(
        ctx,
        "Reading the catalog",
        lambda gateway: gateway.list_endpoints(limit=limit, offset=offset),
    )
    if _as_json(ctx, json_output, answer):
        return
    rows = render.table("API", "Name", "Endpoints", "Verified", "Description")
    for api in answer["apis"]:
        render.add_row(
            rows,
            api["slug"],
            api["name"],
            len(api["endpoints"]),
            "yes" if api["verified"] else "no",
            api.get("description"),
        )
    render.show(rows)
    if answer["pagination"]["hasMore"]:
        render.hint(f"More: gw providers --offset {offset + answer['count']} --limit {limit}")
    render.hint("Next: gw endpoints <API> lists an API's endpoints.")


@app.command()
def endpoints(
    ctx: typer.Context,
    slug: Annotated[
        str, typer.Argument(metavar="API", help="The API's slug, as gw providers or search show.")
    ],
    json_output: JsonFlag = False,
) -> None:
    """List one API's endpoints with their method, path and price."""
    api = _call(ctx, "Reading the catalog", lambda gateway: gateway.api(slug))
    if _as_json(ctx, json_output, api):
        return
    render.show(Text(f"{api['name']} ({api['slug']})", style="bold"))
    if api.get("description"):
        render.show(Text(api["description"]))
    rows = render.table("Method", "Path", "Price", "Description")
    for endpoint in api["endpoints"]:
        render.add_row(
            rows,
            endpoint["method"],
            endpoint["path"],
            render.price(endpoint["price"], endpoint.get("priceUnit")),
            endpoint.get("description"),
        )
    render.show(rows)
    render.hint(f"Next: gw endpoint {slug} <Path> shows an endpoint's parameters.")


@app.command()
def endpoint(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(metavar="API", help="The API's slug.")],
    path: Annotated[str, typer.Argument(metavar="PATH", help="The endpoint's path, as listed.")],
    method: Method = None,
    json_output: JsonFlag = False,
) -> None:
    """Show one endpoint: its price, its parameters and the gw run line that calls it."""
    answer = _call(ctx, "Reading the endpoint", lambda gateway: gateway.details(slug, path, method))
    if _as_json(ctx, json_output, answer):
        return
    api, found = answer["api"], answer["endpoint"]
    render.show(Text(f"{api['name']} ({api['slug']})  {found['method']} {found['path']}"))
    render.show(
        render.fields(
            {
                "price": render.price(found["price"], found.get("priceUnit")),
                "pricing": found.get("priceDetail"),
                "about": found.get("description"),
                "docs": found.get("docsUrl"),
            }
        )
    )
    for title, key in (
        ("Path parameters", "pathParams"),
        ("Query parameters (-q name=value)", "queryParams"),
        ("Body parameters (--body JSON)", "bodyParams"),
    ):
        params = found.get(key) or []
        if not params:
            continue
        rows = render.table("Name", "Type", "Required", "Description")
        rows.title, rows.title_justify = title, "left"
        for param in params:
            render.add_row(
                rows,
                param["name"],
                param.get("type"),
                "yes" if param.get("required") else "no",
                param.get("description"),
            )
        render.show(rows)
    runnable = _runnable(answer.get("usage", {}).get("runApi"))
    render.hint("Run it:")
    render.err.print(Text(f"  {_run_command(api['slug'], found['path'], runnable)}"))


@app.command()
def integrate(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(metavar="API", help="The API's slug.")],
    path: Annotated[str, typer.Argument(metavar="PATH", help="The endpoint's path.")],
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="gw-sdk (default), run-api, curl, x402-fetch, x402-python or all.",
        ),
    ] = None,
    method: Method = None,
    json_output: JsonFlag = False,
) -> None:
    """Print code that calls an endpoint (the snippet on stdout, its set-up on stderr)."""
    answer = _call(
        ctx,
        "Writing the snippet",
        lambda gateway: gateway.integrate(slug, path, format, method),
    )
    if _as_json(ctx, json_output, answer):
        return
    snippets: dict[str, str] = answer["snippets"]
    for name, code in snippets.items():
        if len(snippets) > 1:
            render.show(Text(f"# {name}", style="bold"))
        sys.stdout.write(code.rstrip("\n") + "\n")
        sys.stdout.flush()
    setup = answer.get("setup") or {}
    needs = {"sdk"} if "gw-sdk" in snippets else set()
    needs |= {"x402"} if any(name.startswith("x402") for name in snippets) else set()
    for part in sorted(needs):
        render.hint(f"Set-up ({part}):")
        render.err.print(Text(setup.get(part, "")))


# The paid call


@app.command()
def run(
    ctx: typer.Context,
    slug: Annotated[str, typer.Argument(metavar="API", help="The API's slug.")],
    path: Annotated[
        str, typer.Argument(metavar="PATH", help="The endpoint's path, or a concrete one.")
    ],
    query: Annotated[
        list[str] | None,
        typer.Option(
            "--query",
            "-q",
            metavar="NAME=VALUE",
            help="A query parameter; repeat for more (a name twice sends a list).",
        ),
    ] = None,
    body: Annotated[
        str | None,
        typer.Option(
            "--body",
            "-b",
            metavar="JSON",
            help="The JSON body: '{...}', @file.json, or @- for stdin.",
        ),
    ] = None,
    path_param: Annotated[
        list[str] | None,
        typer.Option(
            "--path-param", "-p", metavar="NAME=VALUE", help="A path placeholder's value."
        ),
    ] = None,
    method: Method = None,
    parent: Annotated[
        str | None,
        typer.Option(
            "--parent",
            help="The request id of a charged first page: a next page is not charged again.",
        ),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key", help="Retrying with the same key replays, never pays twice."
        ),
    ] = None,
    json_output: JsonFlag = False,
) -> None:
    """Call an endpoint and pay for it.

    The provider's answer goes to stdout as JSON, the price and the request id to stderr.
    Live keys are charged; test keys call the sandbox and are never charged.

    Example: gw run hunter /v2/domain-search -q domain=stripe.com -q limit=5
    Next page, not charged again: add -q offset=5 --parent <request id of the first page>
    """
    query_values = _pairs(query or [], "--query")
    path_values = _pairs(path_param or [], "--path-param")
    payload = _body(body)
    answer = _call(
        ctx,
        f"Calling {slug}",
        lambda gateway: gateway.run(
            slug,
            path,
            query=query_values or None,
            body=payload,
            path_params=path_values or None,
            parent_request_id=parent,
            method=method,
            idempotency_key=idempotency_key,
        ),
    )
    if _as_json(ctx, json_output, answer):
        return
    data = answer.get("data")
    if isinstance(data, str):
        sys.stdout.write(data if data.endswith("\n") else data + "\n")
    else:
        render.raw_json(data)
    billing = answer.get("billing") or {}
    charged = "charged" if billing.get("charged") else "not charged"
    render.hint(
        f"{render.dollars_from_cents(answer['priceCents'])} {charged} · "
        f"request {answer['requestId']}"
    )


# Account and credits


@app.command()
def account(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Show who the key belongs to and its mode (live: charged; test: sandbox, free)."""
    answer = _call(ctx, "Asking the gateway", lambda gateway: gateway.whoami())
    if _as_json(ctx, json_output, answer):
        return
    key, owner = answer["data"]["key"], answer["data"]["owner"]
    mode = key["mode"]
    render.show(
        render.fields(
            {
                "key": f"{key['masked']} ({key['name']})",
                "mode": f"{mode}: "
                + ("calls are charged" if mode == "live" else "calls the sandbox, never charged"),
                "owner": f"{owner['type']} {owner['name']}",
            }
        )
    )


@app.command()
def balance(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Show the credits available to spend (pending charges taken off)."""
    answer = _call(ctx, "Reading the balance", lambda gateway: gateway.balance())
    if _as_json(ctx, json_output, answer):
        return
    render.show(Text(f"{render.price(answer['balance'])} available"))


@app.command()
def usage(
    ctx: typer.Context,
    days: Annotated[
        int, typer.Option("--days", "-d", min=1, max=365, help="Look back this many days.")
    ] = 30,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=200, help="Calls to show, newest first.")
    ] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Calls to skip.")] = 0,
    json_output: JsonFlag = False,
) -> None:
    """Show the calls you made and what each cost, newest first."""
    answer = _call(
        ctx,
        "Reading your usage",
        lambda gateway: gateway.usage(days=days, limit=limit, offset=offset),
    )
    if _as_json(ctx, json_output, answer):
        return
    rows = render.table("Time", "API", "Method", "Path", "Cost", "Status", "Request")
    for event in answer["usage"]:
        render.add_row(
            rows,
            render.moment(event["timestamp"]),
            event["api"],
            event["method"],
            event["path"],
            render.price(event["cost"]),
            event["status"],
            event.get("requestId"),
        )
    render.show(rows)
    pagination = answer["pagination"]
    render.show(
        Text(
            f"{render.price(answer['totalSpent'])} spent on {pagination['total']} "
            f"call{'' if pagination['total'] == 1 else 's'} "
            f"in the last {days} days"
        )
    )
    if offset + pagination["count"] < pagination["total"]:
        render.hint(f"More: gw usage --days {days} --offset {offset + pagination['count']}")


@app.command()
def transactions(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=200, help="Entries to show, newest first.")
    ] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Entries to skip.")] = 0,
    json_output: JsonFlag = False,
) -> None:
    """Show the ledger: credits granted, calls charged, refunds, newest first."""
    answer = _call(
        ctx,
        "Reading your transactions",
        lambda gateway: gateway.transactions(limit=limit, offset=offset),
    )
    if _as_json(ctx, json_output, answer):
        return
    rows = render.table("Time", "Id", "Type", "Amount", "Description")
    for entry in answer["transactions"]:
        render.add_row(
            rows,
            render.moment(entry["timestamp"]),
            entry["id"],
            entry["type"],
            render.dollars_from_cents(entry["amountCents"]),
            entry.get("description"),
        )
    render.show(rows)
    if answer["pagination"]["count"] == limit:
        render.hint(f"More: gw transactions --offset {offset + limit}")


# Agents


@app.command()
def mcp(
    ctx: typer.Context,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            envvar="GATEWAY_MCP_URL",
            show_envvar=True,
            help="The gateway's tool server (default: the gateway's address + /mcp).",
        ),
    ] = None,
) -> None:
    """Serve the gateway's tools to a local agent over standard input and output (MCP).

    An agent host (Claude Desktop, Claude Code, Cursor, VS Code...) starts `gw mcp` with
    GATEWAY_API_KEY in its environment and exchanges Model Context Protocol messages with it:
    the tools search, details, integrate, list_endpoints, run, balance and usage.
    """
    settings: Settings = ctx.obj
    if not settings.key:
        render.problem(
            "no API key: set GATEWAY_API_KEY=gw_live_... (or gw_test_...) in the agent host's "
            "configuration, or pass --key"
        )
        raise typer.Exit(ExitCode.AUTH)
    try:
        gateway = Gateway(api_key=settings.key, base_url=settings.base_url, timeout=TIMEOUT)
    except GatewayError as failure:
        render.error(failure)
        raise typer.Exit(_exit_code(failure)) from None
    # Ctrl-C in a terminal ends it quietly; a host ends it by closing standard input.
    with gateway, contextlib.suppress(KeyboardInterrupt):
        serve_stdio(gateway, url or mcp_url_for(gateway.base_url))


def main() -> None:
    try:
        app(prog_name="gw")
    except BrokenPipeError:
        # The reader went away (gw ... | head): stop quietly, as other command-line tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitCode.OTHER)
    except Exception as failure:  # never a traceback: one line, and the "other" exit code
        render.problem(f"unexpected failure: {failure!r}")
        sys.exit(ExitCode.OTHER)


if __name__ == "__main__":
    main()
