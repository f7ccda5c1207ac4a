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
