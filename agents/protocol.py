"""The Model Context Protocol's JSON-RPC messages, answered without a session.

The tool server keeps no state between HTTP requests: ``initialize`` negotiates a protocol
version and the client sends it back in the MCP-Protocol-Version header of every later request
(absent, the spec says to assume 2025-03-26). So any worker of any host answers any message, as
for the rest of the gateway. The SDK's pydantic types validate what arrives and shape what
leaves; the dispatch is written here because the SDK's server runs on an event loop, which the
synchronous gunicorn workers do not have (docs/agents.md has the measured comparison).
"""

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    is_version_at_least,
)
from pydantic import ValidationError

from agents.tools import TOOLS, AgentTool, ToolArgumentsInvalid
from gateway.errors import ApiError, as_api_error
from gateway.selectors import KeyPrincipal

logger = logging.getLogger("agents.protocol")

SERVER_NAME = "api-gateway"
SERVER_VERSION = "1.0"
# 2025-06-18 removed JSON-RPC batches; 2025-11-25 made invalid tool arguments a tool error the
# model can read and correct rather than a protocol error.
BATCHES_REMOVED_IN = "2025-06-18"
ARGUMENT_ERRORS_AS_RESULTS_SINCE = "2025-11-25"

INSTRUCTIONS = (
    "This server calls third-party APIs for you through one gateway key. Workflow: search "
    "for the need in plain words; call details on the best endpoint for its parameters and "
    "price; call run with those parameters (a live key is charged, a test key is free). For "
    "later pages of a paginated result, repeat run with parentRequestId set to the first "
    "call's billing.requestId (not charged again). An asynchronous job's start returns an "
    "id: read the result with run on the poll endpoint that details names (free). Check "
    "balance before costly calls and usage afterwards."
)


@dataclass(frozen=True)
class Reply:
    """What the HTTP answer carries: a JSON-RPC message, a batch of them, or nothing (202)."""

    status: int
    body: dict | list | None
    headers: dict[str, str] = field(default_factory=dict)


class _RequestFailed(Exception):
    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.error = types.ErrorData(code=code, message=message, data=data)


def error_message(code: int, message: str, *, request_id=None, data: Any = None) -> dict:
    error = types.ErrorData(code=code, message=message, data=data)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump(
        by_alias=True, mode="json", exclude_none=True
    ) | {"id": request_id}


def mcp_reply(*, payload: Any, principal: KeyPrincipal, protocol_version: str | None) -> Reply:
    """Answer one decoded POST body: a message, or (before 2025-06-18) a batch of them."""
    version = protocol_version or types.DEFAULT_NEGOTIATED_VERSION
    if isinstance(payload, list):
        return _batch_reply(payload, principal, version, explicit=protocol_version is not None)
    answer = _message_reply(payload, principal, version)
    if answer is None:
        return Reply(202, None)
    rejected = "error" in answer and answer["error"]["code"] in (
        types.INVALID_REQUEST,
        types.PARSE_ERROR,
    )
    return Reply(400 if rejected else 200, answer)


def _batch_reply(batch: list, principal: KeyPrincipal, version: str, *, explicit: bool) -> Reply:
    if explicit and is_version_at_least(version, BATCHES_REMOVED_IN):
        return Reply(
            400,
            error_message(
                types.INVALID_REQUEST,
                f"Protocol version {version} has no batches: send one JSON-RPC message per POST",
            ),
        )
    if not batch:
        return Reply(400, error_message(types.INVALID_REQUEST, "An empty batch is not a request"))
    answers = []
    for message in batch:
        if isinstance(message, dict) and message.get("method") == "initialize":
            answers.append(
                error_message(
                    types.INVALID_REQUEST,
                    "initialize must be sent alone, not in a batch",
                    request_id=_usable_id(message.get("id")),
                )
            )
            continue
        answer = _message_reply(message, principal, version)
        if answer is not None:
            answers.append(answer)
    return Reply(200, answers) if answers else Reply(202, None)


def _usable_id(value: Any) -> int | str | None:
    return value if isinstance(value, str) or (type(value) is int) else None


def _message_reply(message: Any, principal: KeyPrincipal, version: str) -> dict | None:
    """The answer to one message; None for a notification or a client's response."""
    if not isinstance(message, dict):
        return error_message(types.INVALID_REQUEST, "A JSON-RPC message must be a JSON object")
    if "method" not in message:
        # A response to a request of ours; this server sends none, so there is nothing to do.
        try:
            types.jsonrpc_message_adapter.validate_python(message, by_name=False)
        except ValidationError:
            return error_message(
                types.INVALID_REQUEST,
                "Not a JSON-RPC request, notification or response",
                request_id=_usable_id(message.get("id")),
            )
        return None
    if "id" not in message:
        try:
            types.JSONRPCNotification.model_validate(message)
        except ValidationError as problem:
            return error_message(types.INVALID_REQUEST, f"Invalid notification: {_first(problem)}")
        return None  # initialized, cancelled, progress: nothing to act on without a session
    try:
        request = types.JSONRPCRequest.model_validate(message)
    except ValidationError as problem:
        return error_message(
            types.INVALID_REQUEST,
            f"Invalid request: {_first(problem)}",
            request_id=_usable_id(message.get("id")),
        )
    try:
        result = _dispatch(request, principal, version)
    except _RequestFailed as failure:
        return types.JSONRPCError(jsonrpc="2.0", id=request.id, error=failure.error).model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
    return {"jsonrpc": "2.0", "id": request.id, "result": result}


def _first(problem: ValidationError) -> str:
    error = problem.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _dispatch(request: types.JSONRPCRequest, principal: KeyPrincipal, version: str) -> dict:
    params = request.params or {}
    if request.method == "initialize":
        return _initialize(params)
    if request.method == "ping":
        return {}
    if request.method == "tools/list":
        return {"tools": tool_listing()}
    if request.method == "tools/call":
        return _call_tool(params, principal, version)
    raise _RequestFailed(
        types.METHOD_NOT_FOUND,
        f"Method not found: {request.method}. This server offers initialize, ping, "
        "tools/list and tools/call",
    )


def _initialize(params: dict) -> dict:
    try:
        requested = types.InitializeRequestParams.model_validate(params)
    except ValidationError as problem:
        raise _RequestFailed(types.INVALID_PARAMS, f"Invalid params: {_first(problem)}") from None
    # The client's version when this server speaks it, else the newest this server speaks: the
    # client then decides whether it can go on.
    version = (
        requested.protocol_version
        if requested.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        else LATEST_HANDSHAKE_VERSION
    )
    result = types.InitializeResult(
        protocol_version=version,
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False)),
        server_info=types.Implementation(name=SERVER_NAME, version=SERVER_VERSION),
        instructions=INSTRUCTIONS,
    )
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def tool_listing() -> list[dict]:
    return [_tool_definition(tool) for tool in TOOLS.values()]


def _tool_definition(tool: AgentTool) -> dict:
    definition = types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        annotations=types.ToolAnnotations.model_validate(tool.annotations()),
    )
    return definition.model_dump(by_alias=True, mode="json", exclude_none=True)


def _call_tool(params: dict, principal: KeyPrincipal, version: str) -> dict:
    try:
        call = types.CallToolRequestParams.model_validate(params)
    except ValidationError as problem:
        raise _RequestFailed(types.INVALID_PARAMS, f"Invalid params: {_first(problem)}") from None
    tool = TOOLS.get(call.name)
    if tool is None:
        raise _RequestFailed(
            types.INVALID_PARAMS,
            f"Unknown tool: {call.name}. The tools are {', '.join(TOOLS)}",
        )
    try:
        answer = tool.call(principal=principal, arguments=call.arguments or {})
    except ToolArgumentsInvalid as problem:
        message = f"Invalid arguments for {tool.name}: {problem}"
        if not is_version_at_least(version, ARGUMENT_ERRORS_AS_RESULTS_SINCE):
            raise _RequestFailed(types.INVALID_PARAMS, message) from None
        return _tool_error(message + ". Correct them as the tool's inputSchema says.", None)
    except Exception as failure:  # every gateway error, unexpected ones included (logged)
        error = as_api_error(failure)
        return _tool_error(f"{error.message} ({error.code}). {next_step(error)}", error.body())
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text=answer.summary),
            # Hosts that show a model only the content blocks still give it the whole answer.
            types.TextContent(type="text", text=_compact_json(answer.data)),
        ],
        structured_content=answer.data,
        is_error=False,
    )
    return result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude_unset=True)


def _tool_error(text: str, structured: dict | None) -> dict:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=True,
    )
    return result.model_dump(by_alias=True, mode="json", exclude_none=True, exclude_unset=True)


def _compact_json(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


NEXT_STEPS = {
    "INVALID_REQUEST": "Fix the arguments named above; details lists an endpoint's parameters.",
    "UNAUTHORIZED": "The key is no longer valid: ask for a new key from the dashboard.",
    "INSUFFICIENT_CREDITS": (
        "Nothing was charged and the provider was not called. Add credits to the account "
        "(the dashboard's balance page), choose a cheaper endpoint or a smaller limit, or use "
        "a gw_test_ key to try the endpoint in the sandbox for free."
    ),
    "FORBIDDEN": "A test key reaches only APIs with a sandbox: use a live key for this API.",
    "NOT_FOUND": "Call search (or list_endpoints) for the right api slug and path.",
    "UPSTREAM_ERROR": (
        "Nothing was charged. The provider's own answer is in data: correct the inputs it "
        "refuses (see details), or retry later if it failed or timed out."
    ),
    "IDEMPOTENCY_IN_PROGRESS": "The first call with this idempotencyKey is still running: "
    "wait a few seconds and repeat it.",
    "IDEMPOTENCY_MISMATCH": "This idempotencyKey was used for another request: use a new key.",
    "RATE_LIMITED": "Wait a minute before the next call.",
}


def next_step(error: ApiError) -> str:
    return NEXT_STEPS.get(error.code, "Retry in a moment; if it persists, report the failure.")
