"""The official MCP client over streamable HTTP against the live gateway: an agent host's view.
It finds, inspects and runs a seed endpoint with a test key and a live key; the live run is
charged once, like POST /v1/run, and shows in usage."""

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from credits.models import LedgerEntry, UsageEvent
from tests.factories import make_persona

pytestmark = pytest.mark.django_db(transaction=True)

NEED = "find the email addresses of people at a company domain"


@pytest.fixture
def mcp_url(gateway, settings):
    settings.MCP_URL = f"{gateway}/mcp"
    return settings.MCP_URL


def with_client(url: str, key: str | None, session):
    """Run ``session(client)`` with an MCP client connected to ``url`` with ``key``."""

    async def main():
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await session(client)

    return anyio.run(main)


def test_an_agent_searches_reads_details_and_runs_with_a_test_key_for_free(mcp_url, newcomer):
    async def session(client):
        tools = await client.list_tools()
        found = await client.call_tool("search", {"prompt": NEED, "limit": 3})
        details = await client.call_tool("details", {"api": "hunter", "path": "/v2/domain-search"})
        ran = await client.call_tool(
            "run",
            {
                "api": "hunter",
                "path": "/v2/domain-search",
                "query": {"domain": "stripe.com", "limit": 3},
            },
        )
        job = await client.call_tool(
            "run",
            {"api": "snov", "path": "/v2/domain-search/start", "body": {"domain": "stripe.com"}},
        )
        balance = await client.call_tool("balance", {})
        return client.session.initialize_result, tools, found, details, ran, job, balance

    initialized, tools, found, details, ran, job, balance = with_client(
        mcp_url, newcomer.test_key, session
    )

    assert initialized.protocol_version == "2025-11-25"
    assert {tool.name for tool in tools.tools} == {
        "search",
        "details",
        "integrate",
        "list_endpoints",
        "run",
        "balance",
        "usage",
    }
    assert not found.is_error
    assert found.structured_content["results"][0]["slug"] == "hunter"
    assert "api=hunter path=/v2/domain-search" in found.content[0].text
    assert found.content[0].text.endswith(
        "Next: call details with the api and path of the best fit."
    )
    assert details.structured_content["endpoint"]["price"] == "$0.0025"
    assert "Next: call run with" in details.content[0].text
    assert not ran.is_error
    assert len(ran.structured_content["data"]["data"]["emails"]) == 3
    assert ran.structured_content["billing"]["charged"] is False
    assert "not charged (test key" in ran.content[0].text
    assert "only offset changed" in ran.content[0].text
    assert "asynchronous job: read its result with run on GET /v2/domain-search/result/" in (
        job.content[0].text
    )
    assert balance.structured_content["balance"] == "$5.00"
    event = UsageEvent.objects.get(request_id=ran.structured_content["requestId"])
    assert event.mode == "test"


def test_a_live_run_through_the_tool_is_charged_once_and_shows_in_usage(
    mcp_url, newcomer, settings
):
    settings.LIVE_CALLS_USE_SANDBOX = True
    query = {"domain": "stripe.com", "limit": 4}

    async def session(client):
        first = await client.call_tool(
            "run", {"api": "hunter", "path": "/v2/domain-search", "query": query}
        )
        request_id = first.structured_content["billing"]["requestId"]
        page = await client.call_tool(
            "run",
            {
                "api": "hunter",
                "path": "/v2/domain-search",
                "query": {**query, "offset": 4},
                "parentRequestId": request_id,
            },
        )
        usage = await client.call_tool("usage", {"days": 1})
        balance = await client.call_tool("balance", {})
        return first, page, usage, balance

    first, page, usage, balance = with_client(mcp_url, newcomer.live_key, session)

    assert first.structured_content["priceCents"] == 1
    assert first.structured_content["billing"]["charged"] is True
    assert "charged $0.01" in first.content[0].text
    assert f'parentRequestId "{first.structured_content["requestId"]}"' in first.content[0].text
    assert page.structured_content["billing"] == {
        "requestId": page.structured_content["requestId"],
        "parentRequestId": first.structured_content["requestId"],
        "charged": False,
    }
    assert balance.structured_content["balance"] == "$4.99"
    events = usage.structured_content["usage"]
    assert [event["requestId"] for event in events] == [
        page.structured_content["requestId"],
        first.structured_content["requestId"],
    ]
    assert [event["cost"] for event in events] == ["$0.00", "$0.01"]
    assert usage.structured_content["totalSpent"] == "$0.01"
    charges = LedgerEntry.objects.filter(account__user=newcomer.user, type="api_call")
    assert [entry.amount_micros for entry in charges] == [-10_000]


def test_without_credits_the_run_is_a_tool_error_naming_the_price_and_the_balance(
    mcp_url, settings
):
    settings.LIVE_CALLS_USE_SANDBOX = True
    broke = make_persona("broke@example.com")

    async def session(client):
        return await client.call_tool(
            "run",
            {"api": "hunter", "path": "/v2/domain-search", "query": {"domain": "stripe.com"}},
        )

    result = with_client(mcp_url, broke.live_key, session)

    assert result.is_error
    text = result.content[0].text
    assert "this call costs $" in text and "$0.00 is available" in text
    assert "INSUFFICIENT_CREDITS" in text and "Add credits" in text
    assert result.structured_content["priceCents"] > 0
    assert not UsageEvent.objects.filter(status="completed").exists()


def test_a_client_without_a_key_is_refused_with_the_servers_message(mcp_url):
    async def session(client):
        return await client.list_tools()

    with pytest.raises(BaseExceptionGroup) as refused:
        with_client(mcp_url, None, session)

    # The client raises from its task group: the server's 401 message is inside.
    assert refused.group_contains(MCPError, match="bearer token", depth=None)


def test_bad_arguments_reach_the_model_as_a_tool_error(mcp_url, newcomer):
    async def session(client):
        return await client.call_tool("run", {"api": "hunter", "querry": {"domain": "x"}})

    result = with_client(mcp_url, newcomer.test_key, session)

    assert result.is_error
    assert "'path' is a required property" in result.content[0].text
    assert "'querry' was unexpected" in result.content[0].text


def test_a_retried_run_with_the_same_idempotency_key_is_replayed_not_charged_again(
    mcp_url, newcomer, settings
):
    settings.LIVE_CALLS_USE_SANDBOX = True
    arguments = {
        "api": "hunter",
        "path": "/v2/domain-search",
        "query": {"domain": "stripe.com", "limit": 4},
        "idempotencyKey": "order-42",
    }

    async def session(client):
        return [await client.call_tool("run", arguments) for _ in range(2)]

    first, retry = with_client(mcp_url, newcomer.live_key, session)

    assert retry.structured_content == first.structured_content
    assert "(replayed for this idempotencyKey)" in retry.content[0].text
    charges = LedgerEntry.objects.filter(account__user=newcomer.user, type="api_call")
    assert charges.count() == 1
