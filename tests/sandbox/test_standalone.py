"""The sandbox served on its own (``gunicorn sandbox.wsgi``), as the run benchmark's upstream:
the same provider at the same paths, and nothing of the gateway."""

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def standalone_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"}
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "sandbox.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "gunicorn sandbox.wsgi exited"
                time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait()


def _get(port: int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", path)
    return connection.getresponse()


def test_the_ping_answers_with_a_content_length(standalone_port):
    response = _get(standalone_port, "/sandbox/_ping")
    assert response.status == 200
    assert response.getheader("Content-Length") == "11"
    assert json.loads(response.read()) == {"ok": True}


def test_a_seed_operation_answers_as_inside_the_gateway(standalone_port):
    response = _get(standalone_port, "/sandbox/hunter/v2/domain-search?domain=stripe.com&limit=2")
    assert response.status == 200
    assert len(json.loads(response.read())["data"]["emails"]) == 2


def test_nothing_of_the_gateway_is_served(standalone_port):
    for path in ("/healthz", "/v1/whoami", "/admin/", "/login"):
        assert _get(standalone_port, path).status == 404, path
