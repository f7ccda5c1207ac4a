"""The pympp SDK's coroutines run on one event loop per process: shared by every request
thread, and started afresh in a process forked after the parent started its own (gunicorn
``--preload``)."""

import asyncio
import os
import threading

from rails.mpp.loop import LoopTimeout, event_loop, loop_run


async def _running_loop_id() -> int:
    await asyncio.sleep(0)
    return id(asyncio.get_running_loop())


def test_every_thread_runs_on_the_one_loop():
    seen: list[int] = []
    threads = [
        threading.Thread(target=lambda: seen.append(loop_run(_running_loop_id(), timeout=5)))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(seen) == 8
    assert set(seen) == {id(event_loop())}


def test_a_forked_process_starts_a_loop_of_its_own():
    parent_loop = loop_run(_running_loop_id(), timeout=5)
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: the parent's loop thread does not exist here
        try:
            answer = loop_run(_running_loop_id(), timeout=5)
            os.write(write, str(answer).encode())
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 64).decode()
    os.waitpid(child, 0)

    assert answer and int(answer) != parent_loop
    assert loop_run(_running_loop_id(), timeout=5) == parent_loop


def test_a_coroutine_that_outlives_its_timeout_is_cancelled():
    cancelled = threading.Event()

    async def slow():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        loop_run(slow(), timeout=0.1)
    except LoopTimeout:
        pass
    else:
        raise AssertionError("the timeout was not raised")
    assert cancelled.wait(2)
