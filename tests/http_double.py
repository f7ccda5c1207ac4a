"""A real HTTP server on 127.0.0.1 for tests that need real sockets (retries, timeouts, resets).

Each path maps to a handler ``(request) -> Reply``; every request is recorded.
"""

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | dict | list = b""
    headers: dict = field(default_factory=dict)
    delay: float = 0
    reset: bool = False


@dataclass
class Seen:
    method: str
    path: str
    query: dict
    headers: dict
    body: bytes


class HttpDouble:
    def __init__(self):
        self.routes: dict[str, object] = {}
        self.seen: list[Seen] = []
        double = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(
                    self.command, parts.path, parse_qs(parts.query), dict(self.headers), body
                )
                double.seen.append(seen)
                route = double.routes.get(parts.path)
                reply = route(seen) if callable(route) else route or Reply(404, {"error": "no"})
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    # Closing with a zero linger time sends RST instead of FIN.
                    self.close_connection = True
                    return
                payload = reply.body
                content_type = "application/octet-stream"
                if isinstance(payload, dict | list):
                    payload, content_type = json.dumps(payload).encode(), "application/json"
                elif isinstance(payload, str):
                    payload, content_type = payload.encode(), "text/plain; charset=utf-8"
                self.send_response(reply.status)
                headers = {"Content-Type": content_type, **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def calls(self, path: str) -> list[Seen]:
        return [seen for seen in self.seen if seen.path == path]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
