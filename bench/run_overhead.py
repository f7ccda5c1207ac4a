"""What /v1/run adds to a provider call, and how many charged runs a second the gateway settles.

Starts, on a throwaway PostgreSQL database and Redis database 6:
  - an upstream process: the sandbox provider on its own (``gunicorn sandbox.wsgi``, one gthread
    worker), whose fast /sandbox/_ping endpoint stands in for a provider;
  - the gateway as ``make serve`` runs it (gunicorn, 2 gthread workers of 128 threads, --preload),
    with a provider API pointing at the upstream.
Then measures, in one run:
  1. the direct upstream latency and the same call through POST /v1/run at concurrency 1
     (RUN_OVERHEAD_CALLS calls each, default 2000): p50/p99 of both and of the difference;
  2. charged runs per second at concurrency 16 for 20 seconds;
  3. check_ledger, and that the charges equal the successful calls times the price.
Prints figures; asserts nothing.

Everything shares the machine's cores, so the upstream and the load generator are kept as cheap
as they can be: the upstream is the sandbox without the gateway's middleware and apps, and the
load generator sends prepared request bytes on keep-alive sockets from one thread, with one
event loop for the concurrent phase (Python's http.client spends about 0.3 ms of CPU a call).

Environment: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
BENCH_REDIS_URL (default redis://127.0.0.1:6379/6), RUN_OVERHEAD_CALLS, RUN_THROUGHPUT_SECONDS.
"""

import json
import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

import harness

DB_NAME = "gw_bench_run"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6")
GATEWAY_PORT, UPSTREAM_PORT = 9101, 9102
CALLS = int(os.environ.get("RUN_OVERHEAD_CALLS", "2000"))
THROUGHPUT_SECONDS = int(os.environ.get("RUN_THROUGHPUT_SECONDS", "20"))
CONCURRENCY = 16
PRICE_MICROS = 1_000  # $0.001 a call


def environment(database_url: str) -> dict:
    from cryptography.fernet import Fernet

    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gateway.settings",
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + "x" * 40,
        "CATALOG_SECRET_KEY": Fernet.generate_key().decode(),
        "DATABASE_URL": database_url,
        "REDIS_URL": REDIS_URL,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GATEWAY_BASE_URL": f"http://127.0.0.1:{GATEWAY_PORT}",
        "UPSTREAM_ALLOW_PRIVATE_NETWORKS": "True",
        "RATE_LIMIT_PER_MINUTE": "10000000",
        "LOG_LEVEL": "WARNING",
    }


def redis_flush() -> None:
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()


def setup_code(upstream_port: int) -> str:
    """Django shell code creating the bench provider (one fixed-price endpoint on the upstream)
    and a funded user; prints the user's live key."""
    return f"""
from catalog.models import Endpoint, ProviderApi
from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.models import Organization
from gateway.services import api_key_create, user_get_or_create

owner = Organization.objects.create(name="Bench provider", slug="bench-provider")
api = ProviderApi.objects.create(slug="bench", name="Bench", owner=owner,
    base_url="http://127.0.0.1:{upstream_port}/sandbox")
Endpoint.objects.create(api=api, method="GET", path="/_ping", price_kind="fixed",
    price_micros={PRICE_MICROS})
user, _ = user_get_or_create(email="bench@example.com")
credits_grant(account=account_for_user(user=user), amount_micros=10_000_000_000, reason="bench")
print(api_key_create(mode="live", user=user, name="bench")[1])
"""


SETUP = setup_code(UPSTREAM_PORT)


def manage(*args, env, capture=False):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=harness.ROOT,
        env=env,
        check=True,
        text=True,
        capture_output=capture,
    )


def request_bytes(method: str, path: str, body: str = "", headers: dict | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body.encode())}")
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


class Connection:
    """One keep-alive HTTP/1.1 connection that sends one prepared request over and over and
    reads answers with a Content-Length (which every answer of the gateway and the sandbox
    has). Reconnects when the server closes the connection."""

    def __init__(self, port: int, request: bytes):
        self.port, self.request = port, request
        self.sock: socket.socket | None = None
        self.buffer = b""

    def connect(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self) -> None:
        if self.sock is None:
            self.connect()
        try:
            self.sock.sendall(self.request)
        except OSError:  # closed by the server while idle
            self.connect()
            self.sock.sendall(self.request)

    def feed(self, data: bytes) -> tuple[int, dict[str, str], bytes] | None:
        """Add received bytes; the answer (status, headers, body) once it is complete."""
        if not data:
            raise ConnectionError("the server closed the connection mid-answer")
        self.buffer += data
        head_end = self.buffer.find(b"\r\n\r\n")
        if head_end < 0:
            return None
        head = self.buffer[:head_end].decode("latin-1").split("\r\n")
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        end = head_end + 4 + int(headers["content-length"])
        if len(self.buffer) < end:
            return None
        body, self.buffer = self.buffer[head_end + 4 : end], self.buffer[end:]
        if headers.get("connection", "").lower() == "close":
            self.sock.close()
            self.sock = None
        return int(head[0].split()[1]), headers, body

    def call(self) -> tuple[int, float, dict[str, str], bytes]:
        """Send the request and wait for its answer: (status, milliseconds, headers, body)."""
        started = time.perf_counter()
        self.send()
        answer = None
        while answer is None:
            data = self.sock.recv(65536)
            if not data and not self.buffer:
                # gunicorn closes a keep-alive connection idle for 2 s (this one waits while the
                # direct calls run) and may do so as the request goes out: nothing was read or
                # answered, so the request is sent again on a new connection.
                self.connect()
                self.sock.sendall(self.request)
                continue
            answer = self.feed(data)
        status, headers, body = answer
        return status, (time.perf_counter() - started) * 1000, headers, body


def run_concurrently(port: int, request: bytes, concurrency: int, seconds: float) -> dict:
    """Keep ``concurrency`` requests in flight for ``seconds`` from one thread: counts of the
    answers by success, and the first failure."""
    selector = selectors.DefaultSelector()
    counts = {"ok": 0, "failed": 0, "first_failure": None}
    for _ in range(concurrency):
        connection = Connection(port, request)
        connection.send()
        selector.register(connection.sock, selectors.EVENT_READ, connection)
    deadline = time.monotonic() + seconds
    in_flight = concurrency
    while in_flight:
        for key, _ in selector.select(timeout=1):
            connection = key.data
            answer = connection.feed(connection.sock.recv(65536))
            if answer is None:
                continue
            status, _, body = answer
            if status == 200:
                counts["ok"] += 1
            else:
                counts["failed"] += 1
                counts["first_failure"] = counts["first_failure"] or f"{status} {body[:200]!r}"
            selector.unregister(key.fileobj)
            if time.monotonic() < deadline:
                connection.send()
                selector.register(connection.sock, selectors.EVENT_READ, connection)
            else:
                in_flight -= 1
    selector.close()
    return counts


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its waited-for children (Linux), 0 if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def cpu_by_role(gateway: subprocess.Popen, upstream: subprocess.Popen) -> dict[str, dict]:
    """CPU seconds of every process of each role, by pid."""
    return {
        role: {pid: cpu_seconds(pid) for pid in pids}
        for role, pids in process_groups(gateway, upstream).items()
    }


def process_groups(gateway: subprocess.Popen, upstream: subprocess.Popen) -> dict[str, list[int]]:
    """The processes whose CPU time the throughput phase reports, by role."""

    def family(root: int) -> list[int]:
        children = Path(f"/proc/{root}/task/{root}/children")
        return [root, *map(int, children.read_text().split())] if children.exists() else [root]

    postgres = [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and _command(entry) == "postgres"
    ]
    return {
        "gateway": family(gateway.pid),
        "upstream": family(upstream.pid),
        "PostgreSQL": postgres,
        "load generator": [os.getpid()],
    }


def _command(entry: Path) -> str:
    try:
        return (entry / "comm").read_text().strip()
    except OSError:
        return ""


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    harness.argument_parser(__doc__).parse_args()
    with harness.throwaway_database(DB_NAME) as database_url:
        measure(database_url)


def measure(database_url: str) -> None:
    env = environment(database_url)
    print(f"Database {database_url}, Redis {REDIS_URL}")
    redis_flush()
    manage("migrate", "--noinput", "-v", "0", env=env)
    secret = manage("shell", "-c", SETUP, env=env, capture=True).stdout.strip().splitlines()[-1]
    run_request = request_bytes(
        "POST",
        "/v1/run",
        json.dumps({"api": "bench", "path": "/_ping"}),
        {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
    )
    # The sandbox served on its own reads its own settings module.
    sandbox_env = {name: value for name, value in env.items() if name != "DJANGO_SETTINGS_MODULE"}
    with (
        harness.gunicorn_serving(
            UPSTREAM_PORT,
            sandbox_env,
            workers=1,
            app="sandbox.wsgi",
            ready_path="/sandbox/_ping",
        ) as upstream,
        harness.gunicorn_serving(GATEWAY_PORT, env, workers=2) as gateway,
    ):
        direct_client = Connection(UPSTREAM_PORT, request_bytes("GET", "/sandbox/_ping"))
        run_client = Connection(GATEWAY_PORT, run_request)
        warm_ok = 0
        for _ in range(200):
            direct_client.call()
            warm_ok += run_client.call()[0] == 200

        direct = [direct_client.call()[1] for _ in range(CALLS)]
        through, reported, failures = [], [], 0
        for _ in range(CALLS):
            status, elapsed, headers, content = run_client.call()
            if status != 200:
                failures += 1
                print(f"  failed: {status} {content[:200]!r}")
            through.append(elapsed)
            reported.append(float(headers.get("x-gateway-overhead-ms", "nan")))

        print(f"\nConcurrency 1, {CALLS} calls each (ms)      p50      p99")
        print(
            f"  direct upstream               {percentile(direct, 0.5):8.2f} "
            f"{percentile(direct, 0.99):8.2f}"
        )
        print(
            f"  through POST /v1/run          {percentile(through, 0.5):8.2f} "
            f"{percentile(through, 0.99):8.2f}"
        )
        print(
            f"  overhead (run - direct)       "
            f"{percentile(through, 0.5) - percentile(direct, 0.5):8.2f} "
            f"{percentile(through, 0.99) - percentile(direct, 0.99):8.2f}"
        )
        print(
            f"  X-Gateway-Overhead-Ms header  {percentile(reported, 0.5):8.2f} "
            f"{percentile(reported, 0.99):8.2f}"
        )
        print(f"  failed runs: {failures}")

        # PostgreSQL backends and gunicorn threads' connections may start during the run: a
        # process missing from the first reading counts from zero.
        cpu_before = cpu_by_role(gateway, upstream)
        started = time.monotonic()
        counts = run_concurrently(GATEWAY_PORT, run_request, CONCURRENCY, THROUGHPUT_SECONDS)
        seconds = time.monotonic() - started
        cpu = {
            role: sum(used - cpu_before[role].get(pid, 0.0) for pid, used in readings.items())
            for role, readings in cpu_by_role(gateway, upstream).items()
        }
        print(
            f"\nConcurrency {CONCURRENCY} for {seconds:.1f} s: {counts['ok'] / seconds:.0f} "
            f"charged runs/s ({counts['ok']} ok, {counts['failed']} failed)"
        )
        if counts["first_failure"]:
            print(f"  first failure: {counts['first_failure']}")
        runs = max(counts["ok"] + counts["failed"], 1)
        print(
            f"  CPU per run (ms), {os.cpu_count()} cores: "
            + ", ".join(f"{role} {1000 * used / runs:.2f}" for role, used in cpu.items())
        )
        total = sum(cpu.values()) / runs
        busy = runs * total / seconds / os.cpu_count()
        print(
            f"  all of it {1000 * total:.2f} ms a run: the cores could settle at most "
            f"{os.cpu_count() / total:.0f} runs/s; they were busy {100 * busy:.0f}% of the time"
        )

    successful = warm_ok + CALLS - failures + counts["ok"]
    check = subprocess.run(
        [sys.executable, "manage.py", "check_ledger"],
        cwd=harness.ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    print(f"\ncheck_ledger: {(check.stdout + check.stderr).strip()}")
    charged = manage(
        "shell",
        "-c",
        "from credits.models import LedgerEntry; from django.db.models import Sum;"
        "q = LedgerEntry.objects.filter(type='api_call');"
        "print(q.count(), -(q.aggregate(s=Sum('amount_micros'))['s'] or 0))",
        env=env,
        capture=True,
    ).stdout.split()
    entries, total = int(charged[-2]), int(charged[-1])
    expected = successful * PRICE_MICROS
    print(
        f"charges: {entries} api_call entries totalling {total} micro-dollars; successful "
        f"runs x price = {expected}; drift {total - expected}"
    )


if __name__ == "__main__":
    main()
