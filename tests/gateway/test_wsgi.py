"""The WSGI entry point as gunicorn --preload loads it in the master, before forking workers."""

import os
import subprocess
import sys
from pathlib import Path

LOAD_AND_COUNT = """
import gc
import gateway.wsgi
print("frozen", gc.get_freeze_count(), "collectable", len(gc.get_objects()))
"""


def test_what_start_up_loaded_is_left_out_of_the_workers_garbage_collections():
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gateway.settings",
        # No index at the warm-up: Django, the model and the encoder are what is loaded.
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/gw_no_such_database",
    }

    result = subprocess.run(
        [sys.executable, "-c", LOAD_AND_COUNT],
        cwd=Path(__file__).resolve().parents[2],
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    _, frozen, _, collectable = result.stdout.split()
    assert int(frozen) > 100_000
    assert int(collectable) < int(frozen) // 100
