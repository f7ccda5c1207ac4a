"""gw mcp: the gateway's tool server for a local agent, over standard input and output.

An agent host starts ``gw mcp`` and writes Model Context Protocol messages to its standard
input, one JSON-RPC message per line. Each line is posted to the gateway's tool server
(``GATEWAY_BASE_URL/mcp`` unless told otherwise) with the key, and the answer, when there is
one, is written to standard output as one line. The tools, their schemas and the protocol are
the gateway's own: this process carries messages and adds nothing, so it answers exactly as the
gateway's tool server does over HTTP. Diagnostics go to standard error only.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

import requests

from gw_client.client import Gateway
from gw_client.version import __version__

# JSON-RPC's code for a failure of the receiver: here, reaching the gateway.
INTERNAL_ERROR = -32603


def mcp_url_for(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/mcp"


class StdioRelay:
    """Posts each message to the tool server and hands back the line to answer, if any."""

    def __init__(self, gateway: Gateway, url: str):
        self.gateway = gateway
        self.url = url
        # The version initialize agreed on: later requests carry it in MCP-Protocol-Version, as
        # the streamable HTTP transport asks, so the gateway answers by that version's rules.
        self.protocol_version: str | None = None

    def relay(self, line: str) -> str | None:
        message = _decoded(line)
        request_id = message.get("id") if isinstance(message, dict) else None
        is_request = isinstance(message, dict) and "method" in message and "id" in message
        headers = {
            "Authorization": f"Bearer {self.gateway.api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "User-Agent": f"gw-client/{__version__} (mcp)",
        }
        if self.protocol_version and not _is_initialize(message):
            headers["MCP-Protocol-Version"] = self.protocol_version
        try:
            response = self.gateway.session.post(
                self.url, data=line.encode(), headers=headers, timeout=self.gateway.timeout
            )
        except requests.RequestException as failure:
            if not is_request:
                return None
            return _error_line(request_id, f"cannot reach the gateway at {self.url}: {failure}")
        if response.status_code == 202 or not response.content:
            return None
        try:
            answer = response.json()
        except ValueError:
            if not is_request:
                return None
            return _error_line(
                request_id,
                f"the gateway answered HTTP {response.status_code} without a JSON-RPC message; "
                f"is {self.url} its tool server?",
            )
        if isinstance(answer, dict):
            if answer.get("id") is None and "error" in answer and is_request:
                # A refusal of the transport (a bad key, a rate limit) names no request: it is
                # this one's answer.
                answer["id"] = request_id
            if _is_initialize(message) and isinstance(answer.get("result"), dict):
                self.protocol_version = answer["result"].get("protocolVersion")
        return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


def serve(relay: StdioRelay, stdin: TextIO, stdout: TextIO) -> None:
    """Answer every line of ``stdin`` until it closes."""
    for line in stdin:
        if not line.strip():
            continue
        answer = relay.relay(line.strip())
        if answer is not None:
            stdout.write(answer + "\n")
            stdout.flush()


def serve_stdio(gateway: Gateway, url: str) -> None:
    # Line-buffered UTF-8 whatever the locale: the host reads one JSON message per line.
    stdin = open(sys.stdin.fileno(), encoding="utf-8", closefd=False)  # noqa: SIM115
    stdout = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    serve(StdioRelay(gateway, url), stdin, stdout)


def _decoded(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None  # the gateway answers it with a parse error


def _is_initialize(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize"


def _error_line(request_id: Any, text: str) -> str:
    error = {"code": INTERNAL_ERROR, "message": text}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}, ensure_ascii=False)
