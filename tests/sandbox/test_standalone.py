"""The sandbox served on its own (``gunicorn sandbox.wsgi``), as the run benchmark's upstream:
the same provider at the same paths, and nothing of the gateway."""

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def _serving(**settings: str):
    """gunicorn sandbox.wsgi on a free port, with these environment settings."""
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
        env={**env, **settings},
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


@pytest.fixture(scope="module")
def standalone_port():
    with _serving(DEBUG="False") as port:
        yield port


@pytest.fixture(scope="module")
def standalone_debug_port():
    with _serving(DEBUG="True") as port:
        yield port


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


@pytest.mark.parametrize("mode", ["standalone_port", "standalone_debug_port"])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_an_unknown_path_is_a_json_404_in_the_provider_style(request, mode, method):
    port = request.getfixturevalue(mode)
    for path in ("/", "/healthz", "/v1/run", "/sandbox", "/static/app.css"):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request(method, path, body=b"{}" if method == "POST" else None)
        response = connection.getresponse()
        assert response.status == 404, path
        assert response.getheader("Content-Type") == "application/json"
        assert json.loads(response.read()) == {
            "error": {"code": "not_found", "message": f"No route {method} {path}"}
        }


def test_a_stream_reset_after_n_chunks_reaches_the_client_in_whole_chunks(standalone_port):
    url = f"http://127.0.0.1:{standalone_port}/sandbox/zhipu-glm/api/paas/v4/chat/completions"
    body = {"model": "glm-4.5", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    knobs = {"sandbox_fault": "reset", "sandbox_after_chunks": "4"}
    events = []
    with requests.post(url, params=knobs, json=body, stream=True, timeout=10) as response:
        assert response.headers["Transfer-Encoding"] == "chunked"
        with pytest.raises(requests.exceptions.ChunkedEncodingError):
            for line in response.iter_lines():
                if line:
                    events.append(json.loads(line.removeprefix(b"data: ")))
    assert len(events) == 4
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
