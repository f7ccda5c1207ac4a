"""Latency of POST /v1/search end to end (HTTP, auth, rate limit, embedding, ranking, JSON) with the
whole corpus indexed, and the memory of a worker.

Starts the gateway as `make serve` does (gunicorn, gthread, 2 workers, --preload) on a free port of
127.0.0.1, with a live key, and sends requests one at a time at limit 10 once the workers are
warm. Runs on BENCH_DATABASE_URL when set (the corpus and the seed catalog are imported into it
unless it already holds them), otherwise on a throwaway database dropped at the end. Prints
figures; asserts nothing.

    .venv/bin/python bench/search_speed.py
"""

import os
import random
import socket
import statistics
import subprocess
import time
from pathlib import Path

import harness

WORKERS = 2
ROUNDS = 3


def main() -> None:
    harness.argument_parser(__doc__).parse_args()
    with harness.django_database(f"gw_search_speed_{os.getpid()}"):
        _run()


def _run() -> None:
    import requests
    import yaml
    from django.db import connections

    from catalog.models import Endpoint
    from catalog.services import catalog_version_bump
    from gateway.services import api_key_create, user_get_or_create

    harness.corpus_catalog_load()
    user, _ = user_get_or_create(email="search-bench@example.com")
    _, secret = api_key_create(mode="live", user=user, name="search bench")
    endpoints = Endpoint.objects.filter(enabled=True, api__enabled=True).count()
    connections.close_all()

    port = _free_port()
    env = {
        **os.environ,
        "RATE_LIMIT_PER_MINUTE": "1000000",  # the limiter still runs; it must not refuse the bench
        "LOG_LEVEL": "WARNING",
    }
    started = time.perf_counter()
    with (
        open(os.environ.get("BENCH_SERVER_LOG", os.devnull), "w") as server_log,
        harness.gunicorn_serving(
            port, env, workers=WORKERS, stdout=subprocess.DEVNULL, stderr=server_log
        ) as server,
    ):
        boot = time.perf_counter() - started
        base = f"http://127.0.0.1:{port}"
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {secret}"

        def search(prompt: str) -> float:
            began = time.perf_counter()
            response = session.post(f"{base}/v1/search", json={"prompt": prompt, "limit": 10})
            elapsed = (time.perf_counter() - began) * 1000
            if response.status_code != 200:
                raise SystemExit(f"search answered {response.status_code}: {response.text[:300]}")
            return elapsed

        def search_on_new_connection(prompt: str) -> float:
            began = time.perf_counter()
            requests.post(
                f"{base}/v1/search",
                json={"prompt": prompt, "limit": 10},
                headers={"Authorization": f"Bearer {secret}", "Connection": "close"},
            ).raise_for_status()
            return (time.perf_counter() - began) * 1000

        # New connections, so that both workers answer some; new prompts, so none is cached.
        after_start = [search_on_new_connection(f"first searches {n}") for n in range(3 * WORKERS)]
        for number in range(40):  # both workers: first requests, thread pools, connections
            search(f"warm up the workers {number}")
        prompts = [item["q"] for item in yaml.safe_load(harness.QUERIES.read_text())]
        rng = random.Random(7)
        fresh = [search(prompt) for prompt in prompts]  # no worker has seen these prompts
        repeated = []
        for _ in range(ROUNDS):
            rng.shuffle(prompts)
            repeated.extend(search(prompt) for prompt in prompts)

        catalog_version_bump()  # what any catalog edit does: every worker rebuilds its index
        connections.close_all()
        after_change = [
            search_on_new_connection("send an sms with twilio") for _ in range(3 * WORKERS)
        ]
        rss = _worker_memory(server.pid)

    print(f"catalog: {endpoints} enabled endpoints; gunicorn up in {boot:.1f} s")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end")
    print(f"POST /v1/search, limit 10, one request at a time, {WORKERS} gthread workers:")
    print(f"  new prompts       ({len(fresh):>3} requests): {_summary(fresh)}")
    print(f"  repeated prompts  ({len(repeated):>3} requests): {_summary(repeated)}")
    print(
        f"  all               ({len(fresh) + len(repeated):>3} requests): "
        f"{_summary(fresh + repeated)}"
    )
    print(
        "  first requests after start, on new connections: "
        + ", ".join(f"{value:.0f}" for value in after_start)
        + " ms"
    )
    print(
        "  first requests after a catalog change, on new connections (the first one each "
        "worker answers rebuilds its index): "
        + ", ".join(f"{value:.0f}" for value in after_change)
        + " ms"
    )
    for line in rss:
        print(f"  {line}")


def _summary(values: list[float]) -> str:
    p50, p95, p99 = (harness.percentile(values, percent) for percent in (50, 95, 99))
    return (
        f"p50 {p50:5.1f} ms  p95 {p95:5.1f} ms  "
        f"p99 {p99:5.1f} ms  mean {statistics.fmean(values):5.1f} ms"
    )


def _worker_memory(master: int) -> list[str]:
    """Resident and proportional (shared pages split between processes) memory."""
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    lines = []
    for name, pid in [("master", str(master))] + [("worker", child) for child in children]:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        fields = {line.split(":")[0]: line.split()[1] for line in rollup if ":" in line}
        rss, pss = int(fields["Rss"]) / 1024, int(fields["Pss"]) / 1024
        lines.append(f"{name} {pid}: RSS {rss:.0f} MiB, PSS {pss:.0f} MiB")
    return lines


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


if __name__ == "__main__":
    main()
