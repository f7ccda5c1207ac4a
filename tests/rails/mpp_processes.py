"""A second gateway process for the mpp rail: gunicorn (``--preload``, two threaded workers) on
the test database, sharing the first one's chain, realm and challenge secret."""

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def gunicorn_gateway(tmp_path: Path):
    """Yield the base URL of a gateway served by gunicorn with the test process's mpp setup."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    database = connection.settings_dict
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "gateway.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            "2",
            "--threads",
            "4",
            "--preload",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "HOME": str(tmp_path),
            "DATABASE_URL": (
                f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/"
                f"{database['NAME']}"
            ),
            "GATEWAY_BASE_URL": base,
            "MPP_URL": f"{base}/rails/mpp",
            "SANDBOX_BASE_URL": f"{base}/sandbox",
            "LIVE_CALLS_USE_SANDBOX": "true",
            # The catalog's sandbox addresses are the first process's, on 127.0.0.1.
            "UPSTREAM_ALLOW_PRIVATE_NETWORKS": "true",
            "RAIL_PAY_TO": settings.RAIL_PAY_TO,
            "MPP_RPC_URL": settings.MPP_RPC_URL,
            "MPP_REALM": settings.MPP_REALM,
            "MPP_SECRET_KEY": settings.MPP_SECRET_KEY,
            "RATE_LIMIT_ENABLED": "false",
        },
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "gunicorn gateway.wsgi exited"
                assert time.monotonic() < deadline, "gunicorn did not start in time"
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)
