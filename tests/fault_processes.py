"""Real processes for the fault tests: the gateway under gunicorn as `make serve` runs it, and a
Redis and a PostgreSQL cluster of the test's own, which it may kill or restart without touching
the shared ones."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests

from tests.processes import ROOT

START_SECONDS = 180
POLL_SECONDS = 0.1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition, *, seconds: float, what: str):
    """Poll ``condition()`` until it returns something true; that value."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(POLL_SECONDS)


@dataclass
class Gateway:
    base_url: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]


@contextlib.contextmanager
def gateway_serving(
    *, port: int, env: dict[str, str], log_path: Path, workers: int = 1, threads: int = 16
) -> Iterator[Gateway]:
    """The gateway under gunicorn on ``port`` with ``env`` added to this process's environment,
    from when /healthz answers to the end of the block, when it is stopped."""
    log = log_path.open("w")
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "gateway.wsgi",
            "--config",
            "python:gateway.gunicorn_config",
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--preload",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "GATEWAY_BASE_URL": f"http://127.0.0.1:{port}",
            "HOME": str(log_path.parent),
            "XDG_RUNTIME_DIR": str(log_path.parent),
            **env,
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    gateway = Gateway(base_url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)

    def answering() -> bool:
        assert process.poll() is None, gateway.log()[-3000:]
        try:
            requests.get(f"{gateway.base_url}/healthz", timeout=2)
        except (requests.ConnectionError, requests.Timeout):
            return False  # not listening yet, or no worker ready to answer
        return True

    try:
        wait_until(answering, seconds=START_SECONDS, what=f"the gateway on {port} answers")
        yield gateway
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


class PrivateRedis:
    """A redis-server of its own on a free port, without persistence: killed, it loses every
    key, as a Redis that crashed and came back empty does."""

    def __init__(self, directory: Path):
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self._answers, seconds=30, what=f"redis-server on {self.port} answers")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        self.process = None

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False


@contextlib.contextmanager
def private_redis(directory: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(directory)
    server.start()
    try:
        yield server
    finally:
        if server.process is not None:
            server.kill()


class PrivateCluster:
    """A PostgreSQL cluster of its own (initdb in a temporary directory, a free port, trust
    authentication for the user postgres). initdb refuses to run as root, so as root the
    cluster belongs to the postgres user and its commands run as that user."""

    def __init__(self):
        self.port = free_port()
        self.bin = max(
            Path("/usr/lib/postgresql").glob("*/bin"), key=lambda path: int(path.parent.name)
        )
        self.root = Path(tempfile.mkdtemp(prefix="gw-private-cluster-"))
        self.data = self.root / "data"
        self.as_owner: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
            self.as_owner = ["runuser", "-u", "postgres", "--"]

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def initdb(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")

    def start(self) -> None:
        self._pg_ctl("start", "-l", str(self.root / "server.log"))

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is ended and the transactions in flight
        roll back; the command returns once the server accepts connections again."""
        # Without a log file the new server would keep pg_ctl's output open, and this waiting.
        self._pg_ctl("restart", "-m", "fast", "-l", str(self.root / "server.log"))

    def stop(self) -> None:
        self._pg_ctl("stop", "-m", "immediate")

    def log(self) -> str:
        return (self.root / "server.log").read_text(errors="replace")

    def _pg_ctl(self, *args: str) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-o", options, *args)

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self.as_owner, str(self.bin / program), *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )


@contextlib.contextmanager
def private_cluster() -> Iterator[PrivateCluster]:
    cluster = PrivateCluster()
    try:
        cluster.initdb()
        cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):  # never started, or down
            cluster.stop()
        shutil.rmtree(cluster.root, ignore_errors=True)


def shared_database_url() -> str:
    """The address of the test database, for a gateway process to share it with the test."""
    from django.db import connection

    settings_dict = connection.settings_dict
    return (
        f"postgres://{settings_dict['USER']}@{settings_dict['HOST']}:{settings_dict['PORT']}"
        f"/{settings_dict['NAME']}"
    )


def manage(*args: str, env: dict[str, str]) -> str:
    """``manage.py`` in a process of its own with ``env`` added; its standard output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "gateway.settings", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
