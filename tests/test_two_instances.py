"""Two gateway instances on different ports, sharing one PostgreSQL database and one Redis, as
app hosts behind a load balancer do, with one key calling both at once: the rate limit is exact
across them, an Idempotency-Key holds across them, a revoked key stops working on both within
a second, and the books have no drift."""

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import requests
from django.core.management import call_command
from django.db import connection

from catalog.models import ProviderApi
from credits.models import LedgerEntry
from credits.services.accounts import account_for_organization, account_for_user
from gateway.money import format_usd
from gateway.services import api_key_revoke
from tests.factories import api_key_row, fund, make_persona
from tests.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

RATE_LIMIT = 30
FUNDS_MICROS = 5_000_000
START_SECONDS = 180
REVOCATION_SECONDS = 1.0
POLL_SECONDS = 0.05


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _database_url() -> str:
    settings_dict = connection.settings_dict
    return (
        f"postgres://{settings_dict['USER']}@{settings_dict['HOST']}:{settings_dict['PORT']}"
        f"/{settings_dict['NAME']}"
    )


@contextmanager
def _instance(port: int, settings, tmp_path: Path):
    """The gateway under gunicorn on ``port``, on the test database and the tests' Redis: one
    gthread worker of 16 threads, enough for the test's calls and the sandbox calls they make
    to the first instance."""
    base_url = f"http://127.0.0.1:{port}"
    log = (tmp_path / f"gateway-{port}.log").open("w")
    server = subprocess.Popen(
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
            "1",
            "--threads",
            "16",
            "--preload",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "DATABASE_URL": _database_url(),
            "REDIS_URL": settings.REDIS_URL,
            "CACHE_KEY_PREFIX": settings.CACHES["default"].get("KEY_PREFIX", ""),
            "SECRET_KEY": settings.SECRET_KEY,
            "CATALOG_SECRET_KEY": ",".join(settings.CATALOG_SECRET_KEY),
            "GATEWAY_BASE_URL": base_url,
            "SANDBOX_BASE_URL": settings.SANDBOX_BASE_URL,
            "LIVE_CALLS_USE_SANDBOX": "True",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "HOME": str(tmp_path),
            "XDG_RUNTIME_DIR": str(tmp_path),
        },
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert server.poll() is None, (tmp_path / f"gateway-{port}.log").read_text()[-3000:]
            try:
                if requests.get(f"{base_url}/healthz", timeout=2).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, f"the gateway on {port} did not start"
            time.sleep(0.2)
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def _run(base_url: str, key: str, idempotency_key: str | None = None) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"}
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    return requests.post(
        f"{base_url}/v1/run",
        json={"api": "hunter", "path": "/v2/domain-search", "query": {"domain": "x.com"}},
        headers=headers,
        timeout=60,
    )


def _get(base_url: str, key: str, path: str) -> requests.Response:
    return requests.get(f"{base_url}{path}", headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _sum(account, entry_type: str) -> int:
    entries = LedgerEntry.objects.filter(account=account, type=entry_type)
    return sum(entries.values_list("amount_micros", flat=True))


def _balances(instances: list[str], keys) -> dict[str, str]:
    """Each key's balance as every instance reads it; a key read differently fails here."""
    balances = {}
    for key in keys:
        answers = [_get(url, key, "/v1/credits/balance").json() for url in instances]
        assert all(answer["success"] for answer in answers), answers
        read = {answer["balance"] for answer in answers}
        assert len(read) == 1, read
        balances[key] = read.pop()
    return balances


def _in_one_rate_window(seconds_needed: int = 25) -> None:
    """Rate limits count in fixed minutes of the wall clock: wait for a minute that has room
    for the burst, so that its counter cannot start again in the middle."""
    left = 60 - time.time() % 60
    if left < seconds_needed:
        time.sleep(left + 0.5)


@pytest.fixture
def two_instances(settings, tmp_path):
    ports = [_free_port(), _free_port()]
    # The seed catalog points its APIs at the sandbox when it is loaded: the first instance's.
    settings.SANDBOX_BASE_URL = f"http://127.0.0.1:{ports[0]}/sandbox"
    call_command("load_catalog", "--strict", verbosity=0)
    with ExitStack() as stack:
        yield [stack.enter_context(_instance(port, settings, tmp_path)) for port in ports]


def test_two_instances_share_rate_limits_idempotency_revocation_and_the_books(two_instances, alice):
    first, second = two_instances
    caller = make_persona("caller@example.com")
    fund(caller.user, FUNDS_MICROS)
    ProviderApi.objects.filter(slug="hunter").update(owner=alice.organization)
    limited = api_key_row(caller.live_key)
    limited.rate_limit_per_minute = RATE_LIMIT
    limited.save(update_fields=["rate_limit_per_minute"])

    # One key calling both at once, more often than its limit allows.
    _in_one_rate_window()
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(
            pool.map(
                lambda n: _run((first, second)[n % 2], caller.live_key), range(RATE_LIMIT + 10)
            )
        )
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [200] * RATE_LIMIT + [429] * 10, [a.text for a in answers][:3]
    by_instance = {answer.url.rsplit("/v1/", 1)[0] for answer in answers if answer.ok}
    assert by_instance == {first, second}

    # One Idempotency-Key sent to both at once: run and charged once, replayed by either.
    other = make_persona("payer@example.com")
    fund(other.user, FUNDS_MICROS)
    with ThreadPoolExecutor(max_workers=6) as pool:
        racing = list(
            pool.map(lambda n: _run((first, second)[n % 2], other.live_key, "same-call"), range(6))
        )
    assert {answer.status_code for answer in racing} <= {200, 409}
    replays = [_run(base_url, other.live_key, "same-call") for base_url in (first, second)]
    request_ids = {answer.json()["requestId"] for answer in [*racing, *replays] if answer.ok}
    assert len(request_ids) == 1
    assert all(answer.headers.get("Idempotent-Replayed") == "true" for answer in replays)
    payer = account_for_user(user=other.user)
    assert LedgerEntry.objects.filter(account=payer, type="api_call").count() == 1

    # Both instances read the same exact balances, with receipts waiting and once rolled up.
    spent = -_sum(account_for_user(user=caller.user), "api_call")
    earned = _sum(account_for_organization(organization=alice.organization), "revenue")
    assert spent > 0 and earned > 0
    # The live key has spent its minute; the user's test key reads the same account.
    expected = {
        caller.test_key: format_usd(FUNDS_MICROS - spent),
        alice.org_key: format_usd(earned),
    }
    assert _balances(two_instances, expected) == expected
    call_command("roll_up_receipts", verbosity=0)
    assert _balances(two_instances, expected) == expected
    call_command("check_ledger")

    # Revoked on one side: both refuse the key within a second.
    for base_url in two_instances:
        assert _get(base_url, other.live_key, "/v1/whoami").status_code == 200
    revoked_at = time.monotonic()
    api_key_revoke(api_key=api_key_row(other.live_key))
    refused_after = {}
    while len(refused_after) < 2 and time.monotonic() - revoked_at < 5:
        for base_url in two_instances:
            refused = _get(base_url, other.live_key, "/v1/whoami").status_code == 401
            if refused and base_url not in refused_after:
                refused_after[base_url] = time.monotonic() - revoked_at
        time.sleep(POLL_SECONDS)
    assert set(refused_after) == {first, second}
    assert max(refused_after.values()) <= REVOCATION_SECONDS + 2 * POLL_SECONDS, refused_after
