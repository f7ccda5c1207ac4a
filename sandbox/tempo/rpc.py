"""The chain's JSON-RPC endpoint: a threaded standard-library WSGI server, in a thread for tests."""

from __future__ import annotations

import json
import time

from sandbox.local_server import ServedInThread, make_local_server
from sandbox.tempo.chain import RejectedTransaction, TempoChain

BALANCE_OF = "0x70a08231"


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


class TempoRpcApp:
    """A WSGI app answering JSON-RPC 2.0 (single requests and batches) from a TempoChain."""

    def __init__(self, chain: TempoChain | None = None):
        self.chain = chain or TempoChain()
        # Methods that hang for ``stall_seconds`` and then fail, as an overloaded node does.
        self.stalled: set[str] = set()
        self.stall_seconds = 5.0

    def __call__(self, environ, start_response):
        if environ["REQUEST_METHOD"] != "POST":
            start_response("405 Method Not Allowed", [("Content-Type", "text/plain")])
            return [b"JSON-RPC takes POST"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            message = json.loads(environ["wsgi.input"].read(length) or b"null")
        except ValueError:
            return self._reply(start_response, _error(None, -32700, "parse error"))
        if isinstance(message, list):
            return self._reply(start_response, [self.answer(item) for item in message])
        return self._reply(start_response, self.answer(message))

    @staticmethod
    def _reply(start_response, body) -> list[bytes]:
        content = json.dumps(body).encode()
        start_response(
            "200 OK",
            [("Content-Type", "application/json"), ("Content-Length", str(len(content)))],
        )
        return [content]

    def answer(self, message) -> dict:
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return _error(None, -32600, "invalid request")
        request_id, method = message.get("id"), message["method"]
        params = message.get("params") or []
        self.chain.calls[method] += 1
        handler = getattr(self, "rpc_" + method, None)
        if handler is None:
            return _error(request_id, -32601, f"the method {method} does not exist")
        if method in self.stalled:
            time.sleep(self.stall_seconds)
            return _error(request_id, -32000, "the node is overloaded")
        try:
            return {"jsonrpc": "2.0", "id": request_id, "result": handler(*params)}
        except RpcError as error:
            return _error(request_id, error.code, str(error))
        except (TypeError, ValueError, IndexError) as error:
            return _error(request_id, -32602, f"invalid params: {error}")

    # -- methods ----------------------------------------------------------------------------

    def rpc_eth_chainId(self):
        return hex(self.chain.chain_id)

    def rpc_eth_gasPrice(self):
        return hex(self.chain.gas_price)

    def rpc_eth_estimateGas(self, call, block="latest"):
        return hex(270_000)

    def rpc_eth_getTransactionCount(self, address, block="latest"):
        return "0x0"

    def rpc_eth_blockNumber(self):
        return hex(self.chain.block_number)

    def rpc_eth_getBlockByNumber(self, block="latest", full=False):
        return self.chain.latest_block()

    def rpc_eth_call(self, call, block="latest"):
        data = call.get("data") or call.get("input") or ""
        if data.startswith(BALANCE_OF):
            holder = "0x" + data[len(BALANCE_OF) :][-40:]
            return "0x" + self.chain.balance(call["to"], holder).to_bytes(32, "big").hex()
        raise RpcError(-32000, "execution reverted: only balanceOf is answered")

    def rpc_eth_sendRawTransactionSync(self, raw_tx, timeout_ms=None):
        try:
            return self.chain.include(raw_tx)
        except RejectedTransaction as error:
            raise RpcError(-32003, str(error)) from None

    def rpc_eth_sendRawTransaction(self, raw_tx):
        return self.rpc_eth_sendRawTransactionSync(raw_tx)["transactionHash"]

    def rpc_eth_getTransactionReceipt(self, tx_hash):
        return self.chain.receipt(tx_hash)

    def rpc_eth_getTransactionByHash(self, tx_hash):
        transaction = self.chain.transactions.get(tx_hash.lower())
        if transaction is None:
            return None
        return {"hash": transaction["hash"], "from": transaction["from"]}


def _error(request_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


make_rpc_server = make_local_server


class TempoRpcServer(ServedInThread):
    """The chain's JSON-RPC served on a local port from a background thread."""

    thread_name = "tempo-rpc"

    def __init__(self, app: TempoRpcApp, host: str = "127.0.0.1", port: int = 0):
        super().__init__(app, host, port)
        self.chain = app.chain


def serve_in_thread(
    host: str = "127.0.0.1", port: int = 0, *, chain: TempoChain | None = None
) -> TempoRpcServer:
    """Serve a chain (a fresh TempoChain unless one is given); ``.close()`` stops it."""
    return TempoRpcServer(TempoRpcApp(chain), host, port)
