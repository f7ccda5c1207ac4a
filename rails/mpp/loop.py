"""One long-lived event loop per process for the pympp SDK, whose API is async only.

The tempo method caches an HTTP client bound to the loop it first ran on, so a loop per request
(``asyncio.run``) breaks every verification after the first. The loop starts on first use, in a
daemon thread; a process forked after that (gunicorn ``--preload``) sees another pid and starts
its own, since the thread that ran the parent's loop does not exist in the child.
"""

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Coroutine
from typing import Any

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_loop_pid: int | None = None


class LoopTimeout(Exception):
    """The coroutine did not finish in time; it was cancelled."""


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


def event_loop() -> asyncio.AbstractEventLoop:
    """This process's loop, started on first use."""
    global _loop, _loop_pid
    pid = os.getpid()
    if _loop is not None and _loop_pid == pid:
        return _loop
    with _lock:
        if _loop is None or _loop_pid != pid:
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            threading.Thread(
                target=_serve, args=(loop, ready), name="mpp-event-loop", daemon=True
            ).start()
            ready.wait()
            _loop, _loop_pid = loop, pid
    return _loop


def loop_run(coroutine: Coroutine[Any, Any, Any], *, timeout: float) -> Any:
    """Run ``coroutine`` on the process's loop and wait for its result (or its exception)."""
    future = asyncio.run_coroutine_threadsafe(coroutine, event_loop())
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise LoopTimeout(f"no answer within {timeout:g}s") from None
