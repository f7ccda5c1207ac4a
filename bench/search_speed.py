"""Latency of POST /v1/search end to end (HTTP, auth, rate limit, embedding, ranking, JSON) with the
whole corpus indexed, and the memory of a worker.

Starts the gateway as `make serve` does (gunicorn, gthread, 2 workers, --preload) on a free port of
127.0.0.1, with a live key, and sends requests one at a time at limit 10 once the workers are
warm. Runs on BENCH_DATABASE_URL when set (the corpus and the seed catalog are imported into it
unless it already holds them), otherwise on a throwaway database dropped at the end. Prints
figures; asserts nothing.

    .venv/bin/python bench/search_speed.py
"""

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = os.environ.get(
    "CORPUS_DIR", str(ROOT.parent / "shared" / "corpus" / "openapi-directory-lite" / "specs")
)
QUERIES = Path(__file__).resolve().parent / "search_queries.yaml"
WORKERS = 2
ROUNDS = 3


def main() -> None:
    _arguments()
    sys.path.insert(0, str(ROOT))
    throwaway = None
    if os.environ.get("BENCH_DATABASE_URL"):
        os.environ["DATABASE_URL"] = os.environ["BENCH_DATABASE_URL"]
    else:
        throwaway = f"gw_search_speed_{os.getpid()}"
        _admin_sql(f"CREATE DATABASE {throwaway}")
        os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{throwaway}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")
    try:
        _run()
    finally:
        if throwaway:
            from django.db import connections

            connections.close_all()
            _admin_sql(f"DROP DATABASE IF EXISTS {throwaway}")


def _run() -> None:
    import django

    django.setup()
    import requests
    import yaml
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    from catalog.embeddings import embedding_use_all_cores
    from catalog.models import Endpoint
    from catalog.services import catalog_version_bump, endpoint_embeddings_refresh, openapi_import
    from gateway.money import usd_to_micros
    from gateway.services import api_key_create, user_get_or_create

    call_command("migrate", verbosity=0)
    embedding_use_all_cores()
    if Endpoint.objects.count() < 10_000:
        call_command("load_catalog", verbosity=0)
        openapi_import(
            locations=[CORPUS_DIR],
            default_price_micros=usd_to_micros(settings.CATALOG_DEFAULT_PRICE_USD),
        )
    endpoint_embeddings_refresh()
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
    server = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "gunicorn"),
            "gateway.wsgi",
            "--config",
            "python:gateway.gunicorn_config",
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(WORKERS),
            "--threads",
            "8",
            "--preload",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(os.environ.get("BENCH_SERVER_LOG", os.devnull), "w"),  # noqa: SIM115
    )
    try:
        base = f"http://127.0.0.1:{port}"
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {secret}"
        _wait_until_up(session, f"{base}/healthz", server)
        boot = time.perf_counter() - started

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
        prompts = [item["q"] for item in yaml.safe_load(QUERIES.read_text())]
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
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

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
    return (
        f"p50 {_pct(values, 50):5.1f} ms  p95 {_pct(values, 95):5.1f} ms  "
        f"p99 {_pct(values, 99):5.1f} ms  mean {statistics.fmean(values):5.1f} ms"
    )


def _pct(values: list[float], percent: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


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


def _wait_until_up(session, url: str, server) -> None:
    import requests

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
        try:
            if session.get(url, timeout=2).status_code < 500:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.2)
    raise SystemExit("gunicorn did not answer within 120 s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _admin_sql(statement: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as db:
        db.execute(statement)


def _arguments() -> None:
    """No arguments (settings are environment variables); --help prints the module's description."""
    argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()


if __name__ == "__main__":
    main()
