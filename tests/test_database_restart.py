"""PostgreSQL restarts under load (`pg_ctl restart -m fast` on a cluster of the test's own, with a
gunicorn gateway on it keeping persistent connections as in production): the calls in flight
and the ones that meet a dead connection answer a clear 503 in the envelope, none a 500 and none
hangs, the gateway serves again once PostgreSQL is back, and no charge is lost or doubled: the
books balance and the charges are exactly the 200 answers times the price."""

import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import psycopg
import pytest
import requests

from tests.fault_processes import free_port, gateway_serving, manage, private_cluster

PRICE_MICROS = 1_000
LOAD_THREADS = 8
LOAD_SECONDS = 14
RESTART_AFTER_SECONDS = 5
# A call is answered within this, PostgreSQL down or not.
ANSWER_SECONDS = 10
DATABASE = "gateway"

SETUP = """
from catalog.models import Endpoint, ProviderApi
from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.models import ApiKey, Organization
from gateway.services import api_key_create, user_get_or_create

owner = Organization.objects.create(name="Ping provider", slug="ping-provider")
api = ProviderApi.objects.create(slug="ping", name="Ping", owner=owner, base_url="{sandbox}")
Endpoint.objects.create(api=api, method="GET", path="/_ping", price_kind="fixed",
    price_micros={price})
user, _ = user_get_or_create(email="alice@example.com")
credits_grant(account=account_for_user(user=user), amount_micros=1_000_000_000, reason="load")
print(api_key_create(mode=ApiKey.Mode.LIVE, user=user, name="load")[1])
"""

CHARGES = """
from django.db.models import Sum
from credits.models import LedgerEntry
charges = LedgerEntry.objects.filter(type="api_call")
print(charges.count(), -(charges.aggregate(total=Sum("amount_micros"))["total"] or 0))
"""


@pytest.fixture
def cluster():
    with private_cluster() as cluster:
        yield cluster


@pytest.fixture
def gateway(cluster, settings, tmp_path):
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{DATABASE}"')
    port = free_port()
    env = {
        "DATABASE_URL": cluster.url(DATABASE),
        # Persistent connections, as in production: a restart kills every one of them.
        "DATABASE_CONN_MAX_AGE": "60",
        "REDIS_URL": settings.REDIS_URL,
        "CACHE_KEY_PREFIX": "gw-database-restart",
        "SECRET_KEY": settings.SECRET_KEY,
        "CATALOG_SECRET_KEY": ",".join(settings.CATALOG_SECRET_KEY),
        "UPSTREAM_ALLOW_PRIVATE_NETWORKS": "True",
        "RATE_LIMIT_PER_MINUTE": "1000000",
    }
    manage("migrate", "--noinput", "-v", "0", env=env)
    setup = SETUP.format(sandbox=f"http://127.0.0.1:{port}/sandbox", price=PRICE_MICROS)
    key = manage("shell", "-c", setup, env=env).strip().splitlines()[-1]
    # Two workers as `make serve` runs; the provider is the gateway's own sandbox.
    with gateway_serving(
        port=port, env=env, log_path=tmp_path / "gateway.log", workers=2, threads=16
    ) as serving:
        yield SimpleNamespace(base_url=serving.base_url, key=key, env=env, log=serving.log)


def _run(session: requests.Session, base_url: str, key: str) -> tuple:
    """(status or the exception's name, the envelope's code, Retry-After, seconds taken, when
    it was answered)."""
    started = time.monotonic()
    try:
        answer = session.post(
            f"{base_url}/v1/run",
            json={"api": "ping", "path": "/_ping"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
    except requests.RequestException as error:
        finished = time.monotonic()
        return error.__class__.__name__, None, None, finished - started, finished
    finished = time.monotonic()
    code = None if answer.status_code == 200 else answer.json().get("code")
    retry_after = answer.headers.get("Retry-After")
    return answer.status_code, code, retry_after, finished - started, finished


def _load(base_url: str, key: str, until: float) -> list[tuple]:
    with requests.Session() as session:
        answers = []
        while time.monotonic() < until:
            answers.append(_run(session, base_url, key))
        return answers


def test_a_database_restart_under_load_is_a_clear_503_and_loses_no_charge(gateway, cluster):
    until = time.monotonic() + LOAD_SECONDS
    with ThreadPoolExecutor(max_workers=LOAD_THREADS) as pool:
        loads = [
            pool.submit(_load, gateway.base_url, gateway.key, until) for _ in range(LOAD_THREADS)
        ]
        time.sleep(RESTART_AFTER_SECONDS)
        cluster.restart()
        restarted = time.monotonic()
        answers = [answer for load in loads for answer in load.result()]

    statuses = [status for status, *_ in answers]
    assert set(statuses) <= {200, 503}, [
        answer for answer in answers if answer[0] not in (200, 503)
    ]
    unavailable = [answer for answer in answers if answer[0] == 503]
    assert unavailable, "the restart went unnoticed"
    assert {(code, retry_after) for _, code, retry_after, *_ in unavailable} == {
        ("SERVICE_UNAVAILABLE", "2")
    }
    assert max(seconds for *_, seconds, _ in answers) < ANSWER_SECONDS
    # Served again once PostgreSQL is back, under the same load.
    assert any(status == 200 and finished > restarted for status, *_, finished in answers)
    with requests.Session() as session:
        after = [_run(session, gateway.base_url, gateway.key)[0] for _ in range(5)]
    assert after == [200] * 5
    log = gateway.log()
    assert "Unhandled error" not in log and "Internal Server Error" not in log, log[-3000:]

    assert "Ledger clean" in manage("check_ledger", env=gateway.env)
    ok = statuses.count(200) + len(after)
    count, total = map(
        int, manage("shell", "-c", CHARGES, env=gateway.env).splitlines()[-1].split()
    )
    assert (count, total) == (ok, ok * PRICE_MICROS)
