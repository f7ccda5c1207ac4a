"""Serving the facilitator: a threaded standard-library WSGI server, in a thread for tests."""

from __future__ import annotations

from sandbox.facilitator.app import FacilitatorApp
from sandbox.facilitator.chain import OfflineChain
from sandbox.local_server import (
    QuietHandler,
    ServedInThread,
    ThreadingWSGIServer,
    make_local_server,
)

__all__ = [
    "FacilitatorServer",
    "QuietHandler",
    "ThreadingWSGIServer",
    "make_facilitator_server",
    "serve_in_thread",
]

make_facilitator_server = make_local_server


class FacilitatorServer(ServedInThread):
    """A facilitator served on a local port from a background thread."""

    thread_name = "x402-facilitator"

    def __init__(self, app: FacilitatorApp, host: str = "127.0.0.1", port: int = 0):
        super().__init__(app, host, port)
        self.chain = app.chain


def serve_in_thread(
    host: str = "127.0.0.1", port: int = 0, *, chain: OfflineChain | None = None
) -> FacilitatorServer:
    """Start a facilitator (a fresh OfflineChain unless one is given); `.close()` stops it."""
    return FacilitatorServer(FacilitatorApp(chain), host, port)
