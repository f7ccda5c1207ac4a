"""Serving a local double (the payment facilitator, the Tempo chain) over HTTP: a threaded
standard-library WSGI server, run in a thread for tests or in the foreground by ``python -m``.
Standard library only, so that the doubles run without Django."""

from __future__ import annotations

import threading
from collections.abc import Callable
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    # Concurrent-payment tests and the benchmarks open many connections at once.
    request_queue_size = 128


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def make_local_server(
    host: str, port: int, app: Callable, *, quiet: bool = True
) -> ThreadingWSGIServer:
    handler = QuietHandler if quiet else WSGIRequestHandler
    return make_server(host, port, app, ThreadingWSGIServer, handler)  # type: ignore[return-value]


class ServedInThread:
    """``app`` served on a local port from a background thread; ``.close()`` stops it."""

    thread_name = "local-double"

    def __init__(self, app: Callable, host: str = "127.0.0.1", port: int = 0):
        self.app = app
        self._server = make_local_server(host, port, app)
        bound_host, bound_port = self._server.server_address[:2]
        self.url = f"http://{bound_host}:{bound_port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
