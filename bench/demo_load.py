"""Concurrent demo runs against `make run`, as a newcomer's script would send them.

Starts `make run` itself, on free ports and with a data folder of its own (a new SQLite
database, its secrets and demo keys, so nothing of a running demo is touched), reads the live
key it prints, then sends DEMO_CONCURRENCY (default 64) POST /v1/run at once with that key, in
DEMO_ROUNDS rounds (default 3): Hunter's domain search on the sandbox, 5 results at $0.0025
each. Prints the answers by status, the latency (p50, p99, max), the throughput, and whether the
balance dropped by exactly the charges. Stops `make run` at the end.

--sandbox-in-gateway serves the sandbox from the gateway's own workers (SANDBOX_BASE_URL at
the gateway's /sandbox), as `make run` did before it started the sandbox on its own: a run then
holds a worker thread while the sandbox call it makes waits for another one, so with more runs
in flight than the gateway has threads they wait on themselves until the provider timeout (30 s)
and answer 504 (THREADS=8 in the environment, 2 workers of 8, shows it with 64 runs).

It does not install anything: run it after `make install`.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import harness
import requests

CONCURRENCY = int(os.environ.get("DEMO_CONCURRENCY", "64"))
ROUNDS = int(os.environ.get("DEMO_ROUNDS", "3"))
START_SECONDS = 300
RUN = {
    "api": "hunter",
    "path": "/v2/domain-search",
    "query": {"domain": "stripe.com", "limit": 5},
}
PRICE_MICROS = 5 * 2_500


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Demo:
    """`make run` in a process group of its own, and what it printed."""

    def __init__(self, *, sandbox_in_gateway: bool, data_dir: str):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        variables = [
            f"PORT={self.port}",
            f"SANDBOX_PORT={free_port()}",
            f"FACILITATOR_PORT={free_port()}",
            f"TEMPO_PORT={free_port()}",
        ]
        if sandbox_in_gateway:
            variables.append(f"SANDBOX_BASE_URL={self.base_url}/sandbox")
        environment = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("DATABASE_", "REDIS_", "DJANGO_"))
        }
        self.process = subprocess.Popen(
            # -o: the installed project is taken as it is, never reinstalled by a benchmark.
            ["make", "--no-print-directory", "-o", ".venv/.installed", "run", *variables],
            cwd=harness.ROOT,
            env={**environment, "DATA_DIR": data_dir, "LOG_LEVEL": "WARNING"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.output: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)

    def live_key(self) -> str:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit("make run exited:\n" + "".join(self.output[-40:]))
            found = re.search(r"live key: (gw_live_\S+)", "".join(self.output))
            if found and self._answering():
                return found.group(1)
            time.sleep(0.5)
        raise SystemExit("make run did not serve in time:\n" + "".join(self.output[-40:]))

    def _answering(self) -> bool:
        try:
            return requests.get(f"{self.base_url}/healthz", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def balance_micros(base_url: str, key: str) -> int:
    answer = requests.get(
        f"{base_url}/v1/credits/balance", headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    return int(Decimal(answer.json()["balance"].lstrip("$")) * 1_000_000)


def one_run(base_url: str, key: str) -> tuple[str, float]:
    started = time.monotonic()
    try:
        answer = requests.post(
            f"{base_url}/v1/run",
            json=RUN,
            headers={"Authorization": f"Bearer {key}"},
            timeout=90,
        )
        outcome = str(answer.status_code)
    except requests.RequestException as error:
        outcome = error.__class__.__name__
    return outcome, time.monotonic() - started


def measure(base_url: str, key: str) -> None:
    before = balance_micros(base_url, key)
    outcomes: dict[str, int] = {}
    seconds: list[float] = []
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
        for _ in range(ROUNDS):
            for outcome, elapsed in pool.map(lambda _: one_run(base_url, key), range(CONCURRENCY)):
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                seconds.append(elapsed)
    wall = time.monotonic() - started
    charged = before - balance_micros(base_url, key)
    ok = outcomes.get("200", 0)
    print(f"{ROUNDS} rounds of {CONCURRENCY} concurrent runs in {wall:.1f} s")
    print("  answers: " + ", ".join(f"{status} x {n}" for status, n in sorted(outcomes.items())))
    print(
        f"  latency (s): p50 {harness.percentile(seconds, 50):.2f}, "
        f"p99 {harness.percentile(seconds, 99):.2f}, max {max(seconds):.2f}; "
        f"{len(seconds) / wall:.0f} runs/s"
    )
    print(
        f"  balance dropped by {charged} micro-dollars; 200 answers x price = "
        f"{ok * PRICE_MICROS}; drift {charged - ok * PRICE_MICROS}"
    )


def main() -> None:
    parser = harness.argument_parser(__doc__)
    parser.add_argument(
        "--sandbox-in-gateway",
        action="store_true",
        help="serve the sandbox from the gateway's own workers, as make run did before",
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gw-demo-") as data_dir:
        demo = Demo(sandbox_in_gateway=options.sandbox_in_gateway, data_dir=data_dir)
        try:
            key = demo.live_key()
            where = "the gateway's workers" if options.sandbox_in_gateway else "its own gunicorn"
            print(f"make run on {demo.base_url}, the sandbox served by {where}")
            measure(demo.base_url, key)
        finally:
            demo.stop()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
