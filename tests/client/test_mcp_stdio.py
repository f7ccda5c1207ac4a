"""gw mcp as a local agent host runs it: the official MCP client starts it as a subprocess and
speaks MCP over its standard input and output; the messages reach the live gateway's tool
server with the key from GATEWAY_API_KEY."""

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from credits.models import LedgerEntry
from tests.http_double import closed_port

pytestmark = pytest.mark.django_db(transaction=True)

UNSET = ("GATEWAY_API_KEY", "GATEWAY_BASE_URL", "GATEWAY_MCP_URL")


def environment(key: str | None, base_url: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in UNSET}
    env["GATEWAY_BASE_URL"] = base_url
    if key is not None:
        env["GATEWAY_API_KEY"] = key
    return env


def with_stdio_client(key: str, base_url: str, session):
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "gw_client.cli", "mcp"],
        env=environment(key, base_url),
    )

    async def main():
        async with Client(server) as client:
            return await session(client)

    return anyio.run(main)


def gw_mcp(lines: list[str], key: str | None, base_url: str) -> subprocess.CompletedProcess:
    """gw mcp fed ``lines`` on standard input, to its end."""
    return subprocess.run(
        [sys.executable, "-m", "gw_client.cli", "mcp"],
        input="".join(line + "\n" for line in lines),
        env=environment(key, base_url),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_agent_finds_and_runs_an_endpoint_over_stdio(gateway, newcomer, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True

    async def session(client):
        tools = await client.list_tools()
        found = await client.call_tool("search", {"prompt": "verify an email address", "limit": 3})
        ran = await client.call_tool(
            "run",
            {
                "api": "hunter",
                "path": "/v2/domain-search",
                "query": {"domain": "stripe.com", "limit": 4},
            },
        )
        return client.session.initialize_result, tools, found, ran

    initialized, tools, found, ran = with_stdio_client(newcomer.live_key, gateway, session)

    assert initialized.server_info.name == "api-gateway"
    assert len(tools.tools) == 7
    assert found.structured_content["count"] == 3
    assert ran.structured_content["billing"]["charged"] is True
    charges = LedgerEntry.objects.filter(account__user=newcomer.user, type="api_call")
    assert [entry.amount_micros for entry in charges] == [-10_000]


def test_each_line_gets_the_gateways_answer_and_notifications_get_none(gateway, newcomer):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    bad_arguments = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {}},
    }
    result = gw_mcp(
        [
            json.dumps(initialize),
            '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
            "{not json",
            json.dumps(bad_arguments),
        ],
        newcomer.test_key,
        gateway,
    )

    assert result.returncode == 0, result.stderr
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == 3
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[1]["error"]["code"] == -32700
    # The version initialize agreed on travels with later requests: before 2025-11-25, bad
    # arguments are a protocol error.
    assert answers[2]["id"] == 2 and answers[2]["error"]["code"] == -32602


def test_a_refused_key_answers_each_request_with_its_id(gateway):
    result = gw_mcp(
        ['{"jsonrpc": "2.0", "id": "a", "method": "tools/list"}'], "gw_live_" + "x" * 43, gateway
    )

    answer = json.loads(result.stdout)
    assert answer["id"] == "a"
    assert answer["error"]["message"].startswith("Unknown API key")


def test_an_unreachable_gateway_is_an_error_answer_not_a_crash(db):
    result = gw_mcp(
        ['{"jsonrpc": "2.0", "id": 3, "method": "ping"}'],
        "gw_test_" + "x" * 43,
        f"http://127.0.0.1:{closed_port()}",
    )

    assert result.returncode == 0
    answer = json.loads(result.stdout)
    assert answer["id"] == 3
    assert "cannot reach the gateway" in answer["error"]["message"]
    assert "Traceback" not in result.stderr


def test_without_a_key_gw_mcp_exits_with_the_auth_code(db):
    result = gw_mcp([], None, "http://127.0.0.1:9")

    assert result.returncode == 3
    assert "GATEWAY_API_KEY" in result.stderr
    assert result.stdout == ""
