"""The gateway under gunicorn as ``make serve`` starts it: each worker opens its search query
encoder before its first request, the workers still exit when gunicorn stops, and no control
socket is left at the per-user path that every gunicorn on the machine would share."""

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKERS = 2
BOOTED = re.compile(r"Booting worker with pid: (\d+)")
OPENED = re.compile(r"\[(\d+)\] \[INFO\] Worker (\d+) opened the search query encoder")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def test_each_worker_opens_its_query_encoder_before_serving_and_exits_on_stop(tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "gateway.wsgi",
            "--config",
            "python:gateway.gunicorn_config",
            "--bind",
            f"127.0.0.1:{_free_port()}",
            "--worker-class",
            "gthread",
            "--workers",
            str(WORKERS),
            "--preload",
            "--log-level",
            "info",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            # No catalog: start-up loads the model and exports the encoder, and builds no index.
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/gw_no_such_database",
            # Where gunicorn's control socket would go.
            "HOME": str(tmp_path),
            "XDG_RUNTIME_DIR": str(runtime),
        },
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(server.stderr, lines), daemon=True).start()
    log: list[str] = []
    booted: set[str] = set()
    opened: set[str] = set()
    try:
        # Start-up loads the model first; a worker opens its encoder well within a second.
        deadline = time.monotonic() + 180
        while len(opened) < WORKERS and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            log.append(line)
            if match := BOOTED.search(line):
                booted.add(match.group(1))
                if len(booted) == WORKERS:
                    deadline = min(deadline, time.monotonic() + 20)
            if (match := OPENED.search(line)) and match.group(1) == match.group(2):
                opened.add(match.group(2))
        assert opened == booted and len(opened) == WORKERS, "".join(log[-40:])
        assert str(server.pid) not in opened  # the master never opens one: it forks
        assert not [path.name for path in tmp_path.rglob("*.ctl")]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "still running 60 s after SIGTERM"
    assert code == 0, "".join(log[-40:])
