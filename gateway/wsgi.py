import gc
import os
from importlib import import_module

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")

application = get_wsgi_application()

# Django imports the URLconf, and with it every view module, at the first request a process
# answers: done here, gunicorn's workers inherit it instead of each paying about 0.13 s for it.
import_module(settings.ROOT_URLCONF)

# Load the search model and build the search index now, not on the first request: with
# gunicorn --preload this runs once in the master and the workers share the model's memory.
from catalog.search import search_warm_up  # noqa: E402

search_warm_up()


def _database_connections_drop() -> None:
    """Close what start-up opened: with --preload the workers are forked from this process, and
    a connection (or a pool of them) inherited by two workers would be one server session used
    by both at once (their prepared statements collide, their transactions interleave). Each
    worker opens its own at its first query."""
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        connection.close()
        # Only a pool start-up opened: Django's `pool` property would create one to close it.
        if connection.alias in getattr(connection, "_connection_pools", {}):
            connection.close_pool()


_database_connections_drop()

# Most of what start-up loaded (Django, the model, the encoder) lives as long as the process.
# Frozen, it is left out of every later garbage collection: under load a worker otherwise makes a
# full collection every 3,000 to 4,000 requests, walking half a million objects for 0.3 to 0.6 s
# with the GIL held. Frozen objects are still freed by reference counting (the first search
# index, once a rebuild replaces it), only garbage cycles among them would stay.
gc.freeze()
