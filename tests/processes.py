"""Python run in a process of its own, as gunicorn's master runs the gateway's start-up."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def python_without_a_catalog(script: str) -> subprocess.CompletedProcess:
    """Run ``script`` with the gateway's settings and a database that does not exist: start-up
    loads Django, the model and the encoder, and builds no search index."""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/gw_no_such_database",
        },
        capture_output=True,
        text=True,
        timeout=180,
    )
