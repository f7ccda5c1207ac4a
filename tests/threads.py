"""Two database transactions at once, each in a thread with a connection of its own."""

from concurrent.futures import ThreadPoolExecutor

from django.db import connections

TIMEOUT_SECONDS = 30


def side_by_side(first, second):
    """Run ``first()`` and ``second()`` at the same time; ``second``'s result. Each thread's
    connections are closed when its work ends, so the test database can be flushed after."""

    def closing(work):
        try:
            return work()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool:
        first_done = pool.submit(closing, first)
        result = pool.submit(closing, second).result(timeout=TIMEOUT_SECONDS)
        first_done.result(timeout=TIMEOUT_SECONDS)
    return result
