"""What the benchmarks share: the throwaway PostgreSQL database each one runs on, Django set up on
it in the benchmark's own process, the corpus imported for search, gunicorn serving the gateway,
and a --help that prints the benchmark's description.

A throwaway database is created on the server of BENCH_DATABASE_ADMIN_URL (default
postgres://postgres@127.0.0.1:5432/postgres) and dropped at the end. The benchmarks that read the
catalog run on BENCH_DATABASE_URL instead when it is set (an existing database, left in place).
CORPUS_DIR overrides the corpus location. BENCH_THREADS sets the threads of each gateway worker
(default 256, as `make serve`).
"""

import argparse
import contextlib
import http.client
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DIR = os.environ.get(
    "CORPUS_DIR", str(ROOT.parent / "shared" / "corpus" / "openapi-directory-lite" / "specs")
)
QUERIES = Path(__file__).resolve().parent / "search_queries.yaml"
# The held-out needs, which nothing is chosen or fitted on, by split: the second set was written
# after the use cases were settled, for endpoints of a new draw; the third, in the same style, for
# 600 endpoints of a later draw.
HELDOUT_NEEDS = {
    "heldout": Path(__file__).resolve().parent / "search_heldout.yaml",
    "fresh": Path(__file__).resolve().parent / "search_heldout_fresh.yaml",
    "paraphrased": Path(__file__).resolve().parent / "search_heldout_paraphrased.yaml",
}
ADMIN_URL = os.environ.get(
    "BENCH_DATABASE_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres"
)
GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
# Threads per gateway worker, as `make serve` runs it (THREADS); BENCH_THREADS overrides.
SERVE_THREADS = int(os.environ.get("BENCH_THREADS", "256"))
SERVER_START_SECONDS = 120


def search_queries() -> list[dict]:
    """The needs of search_queries.yaml, each with its split: unmarked ones are `validation`
    every third (the 3rd, 6th, ...) and `train` otherwise."""
    import yaml

    queries = yaml.safe_load(QUERIES.read_text())
    for number, query in enumerate(queries, start=1):
        query.setdefault("split", "validation" if number % 3 == 0 else "train")
    return queries


def heldout_needs() -> list[dict]:
    """The held-out needs, each with its split (`heldout`, `fresh` or `paraphrased`)."""
    import yaml

    return [
        {**query, "split": split}
        for split, path in HELDOUT_NEEDS.items()
        for query in yaml.safe_load(path.read_text())
    ]


def argument_parser(description: str) -> argparse.ArgumentParser:
    """A parser whose --help prints ``description`` as it is written. Benchmarks take their
    settings from environment variables; a benchmark with options adds them."""
    return argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def database_url(name: str) -> str:
    """The address of the database ``name`` on the server of BENCH_DATABASE_ADMIN_URL."""
    return urlsplit(ADMIN_URL)._replace(path=f"/{name}").geturl()


@contextlib.contextmanager
def throwaway_database(name: str) -> Iterator[str]:
    """A new, empty database ``name`` (one left by an earlier run is dropped first), dropped at
    the end; yields its address."""
    _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _admin_sql(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(name)
    finally:
        _django_connections_close()
        _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def django_database(throwaway_name: str) -> Iterator[None]:
    """Django set up in this process on BENCH_DATABASE_URL when it is set, else on the throwaway
    database ``throwaway_name``, migrated. Like a batch command, which runs alone, it embeds on
    every core. No connection pool: a pooled connection would outlive ``connections.close_all()``
    and follow a forked child, which would then share its socket with the parent."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")
    os.environ.setdefault("DATABASE_POOL", "False")
    given = os.environ.get("BENCH_DATABASE_URL")
    database = contextlib.nullcontext(given) if given else throwaway_database(throwaway_name)
    with database as url:
        os.environ["DATABASE_URL"] = url
        import django

        django.setup()
        from django.core.management import call_command

        from catalog.embeddings import embedding_use_all_cores

        call_command("migrate", verbosity=0)
        embedding_use_all_cores()
        yield


def corpus_catalog_load() -> int:
    """Import the seed catalog and the corpus unless the database holds them already (a rerun on
    BENCH_DATABASE_URL), then embed the endpoints not embedded yet; returns how many were."""
    from django.conf import settings
    from django.core.management import call_command

    from catalog.models import Endpoint
    from catalog.services import endpoint_embeddings_refresh, openapi_import
    from gateway.money import usd_to_micros

    if Endpoint.objects.count() < 10_000:
        call_command("load_catalog", verbosity=0)
        openapi_import(
            locations=[CORPUS_DIR],
            default_price_micros=usd_to_micros(settings.CATALOG_DEFAULT_PRICE_USD),
        )
    return endpoint_embeddings_refresh()


@contextlib.contextmanager
def gunicorn_serving(
    port: int,
    env: dict[str, str],
    *,
    workers: int,
    threads: int = SERVE_THREADS,
    app: str = "gateway.wsgi",
    ready_path: str = "/healthz",
    **popen_options,
) -> Iterator[subprocess.Popen]:
    """``app`` served on 127.0.0.1:``port`` as `make serve` serves the gateway (gthread workers,
    --preload, the gateway's gunicorn config for the gateway), from when it answers
    ``ready_path`` to the end, when it is stopped."""
    config = ["--config", "python:gateway.gunicorn_config"] if app == "gateway.wsgi" else []
    process = subprocess.Popen(
        [
            GUNICORN,
            app,
            *config,
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "gthread",
            "--workers",
            str(workers),
            "--threads",
            str(threads),
            "--preload",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        **popen_options,
    )
    try:
        _wait_until_answering(process, port, ready_path)
        yield process
    finally:
        process.terminate()
        process.wait()


def gateway_environment(
    database_url: str, *, redis_url: str, gateway_port: int, sandbox_port: int, **settings: str
) -> dict[str, str]:
    """The environment of a production-mode gateway on ``gateway_port`` whose live and test keys
    are served by a sandbox of its own on ``sandbox_port``; ``settings`` add or override."""
    from cryptography.fernet import Fernet

    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "gateway.settings",
        "DEBUG": "False",
        "SECRET_KEY": "bench-" + "x" * 40,
        "CATALOG_SECRET_KEY": Fernet.generate_key().decode(),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "GATEWAY_BASE_URL": f"http://127.0.0.1:{gateway_port}",
        "SANDBOX_BASE_URL": f"http://127.0.0.1:{sandbox_port}/sandbox",
        "LIVE_CALLS_USE_SANDBOX": "True",
        "RATE_LIMIT_PER_MINUTE": "10000000",
        "LOG_LEVEL": "WARNING",
        **settings,
    }


def manage(*args: str, env: dict[str, str], capture: bool = False):
    """``manage.py args`` in ``env``, raising on failure; its output when ``capture``."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        text=True,
        capture_output=capture,
    )


def percentile(values: list[float], percent: int) -> float:
    """The value ``percent`` of the way from the smallest to the largest (the nearest one)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(percent / 100 * (len(ordered) - 1)))]


def _wait_until_answering(process: subprocess.Popen, port: int, path: str) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn on port {port} exited with {process.returncode}")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            connection.request("GET", path)
            connection.getresponse()
            return
        except (OSError, http.client.HTTPException):
            time.sleep(0.1)
        finally:
            connection.close()
    raise SystemExit(f"gunicorn on port {port} did not answer within {SERVER_START_SECONDS} s")


def _admin_sql(statement: str) -> None:
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as connection:
        connection.execute(statement)


def _django_connections_close() -> None:
    from django.conf import settings

    if settings.configured:
        from django.db import connections

        connections.close_all()
