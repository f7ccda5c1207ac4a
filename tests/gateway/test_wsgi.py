"""The WSGI entry point as gunicorn --preload loads it in the master, before forking workers."""

from tests.processes import python_without_a_catalog

LOAD_AND_COUNT = """
import gc
import gateway.wsgi
print("frozen", gc.get_freeze_count(), "collectable", len(gc.get_objects()))
"""


def test_what_start_up_loaded_is_left_out_of_the_workers_garbage_collections():
    result = python_without_a_catalog(LOAD_AND_COUNT)

    assert result.returncode == 0, result.stderr[-2000:]
    _, frozen, _, collectable = result.stdout.split()
    assert int(frozen) > 100_000
    assert int(collectable) < int(frozen) // 100


LOAD_AND_LIST_VIEWS = """
import sys
import gateway.wsgi
print(" ".join(name for name in ("gateway.urls", "catalog.apis", "credits.apis", "dashboard.views")
               if name in sys.modules))
"""


def test_start_up_imports_the_urlconf_and_its_views_so_workers_inherit_them():
    result = python_without_a_catalog(LOAD_AND_LIST_VIEWS)

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [
        "gateway.urls",
        "catalog.apis",
        "credits.apis",
        "dashboard.views",
    ]


LOAD_AND_SHOW_CONNECTIONS = """
import gateway.wsgi
from django.db import connection
print(connection.connection is None, connection.alias in connection._connection_pools)
"""


def test_start_up_leaves_no_database_connection_for_the_workers_to_share(db):
    """Two forked workers on one inherited connection (or pool) would share one server session:
    prepared statements collide ("prepared statement already exists") and transactions mix."""
    import os
    import subprocess
    import sys

    from django.db import connection

    from tests.processes import ROOT

    database = connection.settings_dict
    result = subprocess.run(
        [sys.executable, "-c", LOAD_AND_SHOW_CONNECTIONS],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{database['NAME']}",
            "DATABASE_POOL": "True",
        },
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split()[-2:] == ["True", "False"]
