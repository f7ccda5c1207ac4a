"""The tool server's JSON-RPC as the MCP specification has it: negotiation, errors, batches and
notifications, and the HTTP statuses of the streamable HTTP transport. Never a 500."""

import json

import pytest

from agents.tools import TOOLS

pytestmark = pytest.mark.django_db

MCP = "/mcp"
TOOL_NAMES = {"search", "details", "integrate", "list_endpoints", "run", "balance", "usage"}


@pytest.fixture
def post(client_for, alice):
    """post(body, **headers) -> response: a raw POST to the tool server with alice's live key."""
    client = client_for(alice.live_key)

    def send(body, *, raw: str | None = None, **headers):
        data = raw if raw is not None else json.dumps(body)
        headers.setdefault("HTTP_ACCEPT", "application/json, text/event-stream")
        return client.post(MCP, data=data, content_type="application/json", **headers)

    return send


def request(method: str, params: dict | None = None, id=1) -> dict:
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(version: str) -> dict:
    return request(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )


def test_initialize_answers_the_clients_version_when_it_speaks_it(post):
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        response = post(initialize(version))

        assert response.status_code == 200
        result = response.json()["result"]
        assert result["protocolVersion"] == version
        assert result["capabilities"] == {"tools": {"listChanged": False}}
        assert result["serverInfo"]["name"] == "api-gateway"
        assert "search" in result["instructions"] and "parentRequestId" in result["instructions"]
        assert "mcp-session-id" not in response.headers


def test_initialize_counters_an_unknown_version_with_the_newest_it_speaks(post):
    response = post(initialize("2031-01-01"))

    assert response.json()["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_without_its_params_is_invalid_params(post):
    response = post(request("initialize", {"capabilities": {}}))

    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32602
    assert "protocolVersion" in error["message"]


def test_tools_list_describes_every_tool_with_a_closed_input_schema(post):
    response = post(request("tools/list"), HTTP_MCP_PROTOCOL_VERSION="2025-11-25")

    tools = response.json()["result"]["tools"]
    assert {tool["name"] for tool in tools} == TOOL_NAMES
    for tool in tools:
        assert len(tool["description"]) > 80
        assert tool["inputSchema"]["type"] == "object"
        assert tool["inputSchema"]["additionalProperties"] is False
    run = next(tool for tool in tools if tool["name"] == "run")
    assert run["inputSchema"]["required"] == ["api", "path"]
    assert run["annotations"]["readOnlyHint"] is False
    assert "parentRequestId" in run["inputSchema"]["properties"]


def test_ping_answers_an_empty_result(post):
    assert post(request("ping", id="p-1")).json() == {"jsonrpc": "2.0", "id": "p-1", "result": {}}


def test_a_notification_is_accepted_without_a_body(post):
    response = post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    assert response.status_code == 202
    assert response.content == b""


def test_a_response_from_the_client_is_accepted_without_a_body(post):
    response = post({"jsonrpc": "2.0", "id": 7, "result": {}})

    assert response.status_code == 202


def test_malformed_json_is_a_parse_error(post):
    response = post(None, raw='{"jsonrpc": "2.0", "id": 1, "method": ')

    assert response.status_code == 400
    body = response.json()
    assert body["id"] is None
    assert body["error"]["code"] == -32700


@pytest.mark.parametrize(
    "message",
    [
        "just a string",
        42,
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": 12},
        {"jsonrpc": "2.0", "id": 1},
    ],
)
def test_a_message_that_is_not_json_rpc_is_an_invalid_request(post, message):
    response = post(message)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_an_unknown_method_is_method_not_found(post):
    response = post(request("resources/list"))

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == 1
    assert body["error"]["code"] == -32601
    assert "tools/call" in body["error"]["message"]


def test_an_unknown_tool_is_invalid_params_naming_the_tools(post):
    response = post(request("tools/call", {"name": "delete_everything", "arguments": {}}))

    error = response.json()["error"]
    assert error["code"] == -32602
    assert "delete_everything" in error["message"] and "search" in error["message"]


def test_arguments_that_are_not_an_object_are_invalid_params(post):
    response = post(request("tools/call", {"name": "balance", "arguments": "all"}))

    assert response.json()["error"]["code"] == -32602


def test_bad_arguments_are_a_tool_error_the_model_can_correct_from_2025_11_25(post):
    response = post(
        request("tools/call", {"name": "search", "arguments": {"promt": "emails", "limit": "5"}}),
        HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
    )

    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "'prompt' is a required property" in text
    assert "'promt' was unexpected" in text
    assert "limit: '5' is not of type 'integer'" in text


def test_bad_arguments_are_invalid_params_before_2025_11_25(post):
    for version in (None, "2025-06-18"):
        headers = {"HTTP_MCP_PROTOCOL_VERSION": version} if version else {}
        response = post(
            request("tools/call", {"name": "details", "arguments": {"api": "hunter"}}), **headers
        )

        error = response.json()["error"]
        assert error["code"] == -32602
        assert "'path' is a required property" in error["message"]


def test_a_value_the_route_refuses_is_a_tool_error_with_the_routes_message(post):
    response = post(
        request("tools/call", {"name": "usage", "arguments": {"days": 0}}),
        HTTP_MCP_PROTOCOL_VERSION="2025-11-25",
    )

    result = response.json()["result"]
    assert result["isError"] is True
    assert "days" in result["content"][0]["text"]


def test_an_unknown_api_is_a_tool_error_that_says_to_search(post):
    response = post(
        request("tools/call", {"name": "details", "arguments": {"api": "nope", "path": "/x"}})
    )

    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "NOT_FOUND"
    assert "Call search" in result["content"][0]["text"]


def test_a_missing_key_is_401_with_a_json_rpc_error(client_for):
    response = client_for(None).post(
        MCP, data=json.dumps(request("tools/list")), content_type="application/json"
    )

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="gateway"'
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert "bearer token" in body["error"]["message"]


def test_an_unknown_key_is_401(client_for):
    response = client_for("gw_live_" + "x" * 43).post(
        MCP, data=json.dumps(request("tools/list")), content_type="application/json"
    )

    assert response.status_code == 401


def test_an_unsupported_protocol_version_header_is_400_naming_the_supported_ones(post):
    response = post(request("server/discover"), HTTP_MCP_PROTOCOL_VERSION="2026-07-28")

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["data"]["requested"] == "2026-07-28"
    assert "2025-11-25" in error["data"]["supported"]


def test_a_batch_before_2025_06_18_answers_each_request_and_skips_notifications(post):
    batch = [
        request("ping", id=1),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request("tools/call", {"name": "nope"}, id=2),
        "junk",
    ]

    response = post(batch, HTTP_MCP_PROTOCOL_VERSION="2025-03-26")

    assert response.status_code == 200
    answers = response.json()
    assert [answer.get("id") for answer in answers] == [1, 2, None]
    assert answers[0]["result"] == {}
    assert answers[1]["error"]["code"] == -32602
    assert answers[2]["error"]["code"] == -32600


def test_a_batch_of_notifications_only_is_accepted(post):
    response = post([{"jsonrpc": "2.0", "method": "notifications/initialized"}])

    assert response.status_code == 202


def test_an_empty_batch_is_an_invalid_request(post):
    response = post([])

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_initialize_may_not_be_batched(post):
    response = post([initialize("2025-03-26")])

    assert response.json()[0]["error"]["code"] == -32600


def test_a_batch_from_2025_06_18_on_is_refused(post):
    response = post([request("ping")], HTTP_MCP_PROTOCOL_VERSION="2025-06-18")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600


def test_the_transport_refuses_what_it_cannot_answer(post, client_for, alice):
    client = client_for(alice.live_key)
    assert client.get(MCP).status_code == 405
    assert "POST" in client.get(MCP)["Allow"]
    assert client.delete(MCP).status_code == 405
    text = client.post(MCP, data="ping", content_type="text/plain")
    assert text.status_code == 415
    assert post(request("ping"), HTTP_ACCEPT="text/html").status_code == 406
    assert post(request("ping"), HTTP_ORIGIN="https://evil.example").status_code == 403
    assert post(request("ping"), HTTP_ORIGIN="http://testserver").status_code == 200


def test_every_tool_schema_is_a_valid_json_schema():
    from jsonschema import Draft202012Validator

    for tool in TOOLS.values():
        Draft202012Validator.check_schema(tool.input_schema)


def test_an_oversized_message_is_413_and_a_too_deep_one_400(post, settings):
    deep = request("tools/call", {"name": "run", "arguments": {"body": {}}})
    nested = deep["params"]["arguments"]["body"]
    for _ in range(70):
        nested["a"] = {}
        nested = nested["a"]
    too_deep = post(deep)
    assert too_deep.status_code == 400
    assert "deeper than 67 levels" in too_deep.json()["error"]["message"]

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    large = post(request("tools/call", {"name": "search", "arguments": {"prompt": "x" * 2000}}))

    assert large.status_code == 413
    assert large.json()["error"]["code"] == -32600
