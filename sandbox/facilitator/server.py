"""Serving the facilitator: a threaded standard-library WSGI server, in a thread for tests."""

from __future__ import annotations

import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from sandbox.facilitator.app import FacilitatorApp
from sandbox.facilitator.chain import OfflineChain


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    # Concurrent-payment tests and the benchmark open many connections at once.
    request_queue_size = 128


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def make_facilitator_server(
    host: str, port: int, app: FacilitatorApp, *, quiet: bool = True
) -> ThreadingWSGIServer:
    handler = QuietHandler if quiet else WSGIRequestHandler
    return make_server(host, port, app, ThreadingWSGIServer, handler)  # type: ignore[return-value]


class FacilitatorServer:
    """A facilitator served on a local port from a background thread."""

    def __init__(self, app: FacilitatorApp, host: str = "127.0.0.1", port: int = 0):
        self.app = app
        self.chain = app.chain
        self._server = make_facilitator_server(host, port, app)
        bound_host, bound_port = self._server.server_address[:2]
        self.url = f"http://{bound_host}:{bound_port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="x402-facilitator",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> FacilitatorServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def serve_in_thread(
    host: str = "127.0.0.1", port: int = 0, *, chain: OfflineChain | None = None
) -> FacilitatorServer:
    """Start a facilitator (a fresh OfflineChain unless one is given); `.close()` stops it."""
    return FacilitatorServer(FacilitatorApp(chain), host, port)
