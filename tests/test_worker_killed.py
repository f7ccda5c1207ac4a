"""A gunicorn worker is killed (SIGKILL) while a slow charged call holds credits: nothing settles
the hold, so it stays pending past HOLD_TTL_SECONDS until the sweeper command,
`release_expired_holds`, releases it; the balance comes back exactly, nothing is charged, the
master starts a new worker, and the books balance."""

import contextlib
import time
from datetime import timedelta
from io import StringIO
from threading import Thread

import pytest
import requests
from django.core.management import call_command
from django.utils import timezone

from credits.models import Hold, LedgerEntry
from gateway.money import format_usd
from tests.factories import fund
from tests.fault_processes import free_port, gateway_serving, kill, shared_database_url, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

FUNDS_MICROS = 5_000_000
HOLD_TTL_SECONDS = 15
# The slow call outlasts the moment the worker is killed, and stays under the provider timeout.
PROVIDER_DELAY_MS = 4_000
RUN = {"api": "hunter", "path": "/v2/email-verifier", "query": {"email": "ada@stripe.com"}}


@pytest.fixture
def gateway(settings, tmp_path):
    port = free_port()
    settings.SANDBOX_BASE_URL = f"http://127.0.0.1:{port}/sandbox"
    call_command("load_catalog", "--strict", verbosity=0)
    env = {
        "DATABASE_URL": shared_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CACHE_KEY_PREFIX": "gw-worker-killed",
        "SECRET_KEY": settings.SECRET_KEY,
        "CATALOG_SECRET_KEY": ",".join(settings.CATALOG_SECRET_KEY),
        "SANDBOX_BASE_URL": settings.SANDBOX_BASE_URL,
        "LIVE_CALLS_USE_SANDBOX": "True",
        # A short hold lifetime, and provider time bounds that fit inside it.
        "HOLD_TTL_SECONDS": str(HOLD_TTL_SECONDS),
        "UPSTREAM_TIMEOUT_CAP_SECONDS": "5",
        "UPSTREAM_STREAM_MAX_SECONDS": "2",
    }
    with gateway_serving(port=port, env=env, log_path=tmp_path / "gateway.log") as serving:
        yield serving


def _run(base_url: str, key: str, query: dict | None = None, timeout: float = 30):
    return requests.post(
        f"{base_url}/v1/run",
        json={**RUN, "query": {**RUN["query"], **(query or {})}},
        headers={"Authorization": f"Bearer {key}"},
        timeout=timeout,
    )


def _balance(base_url: str, key: str) -> str:
    answer = requests.get(
        f"{base_url}/v1/credits/balance", headers={"Authorization": f"Bearer {key}"}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["balance"]


def test_a_hold_left_by_a_killed_worker_expires_and_the_sweeper_gives_it_back(gateway, alice):
    account = fund(alice.user, FUNDS_MICROS)
    [worker] = gateway.worker_pids()

    def slow_call():
        # The worker dies with the connection.
        with contextlib.suppress(requests.ConnectionError):
            _run(gateway.base_url, alice.live_key, {"sandbox_delay_ms": PROVIDER_DELAY_MS})

    caller = Thread(target=slow_call)
    caller.start()
    hold = wait_until(
        lambda: Hold.objects.filter(account=account, status=Hold.Status.PENDING).first(),
        seconds=10,
        what="the slow call reserves its hold",
    )
    kill(worker)
    caller.join(timeout=30)
    assert hold.expires_at - hold.created_at == timedelta(seconds=HOLD_TTL_SECONDS)

    # The master replaces the worker; until the hold expires it is still held.
    wait_until(
        lambda: gateway.worker_pids() and gateway.worker_pids() != [worker],
        seconds=60,
        what="a new worker",
    )
    assert _balance(gateway.base_url, alice.test_key) == format_usd(
        FUNDS_MICROS - hold.amount_micros
    )

    time.sleep(max(0.0, (hold.expires_at - timezone.now()).total_seconds()) + 0.5)
    hold.refresh_from_db()
    assert hold.status == Hold.Status.PENDING

    swept = StringIO()
    call_command("release_expired_holds", stdout=swept)
    assert swept.getvalue().strip() == "Expired 1 holds"

    hold.refresh_from_db()
    assert hold.status == Hold.Status.EXPIRED
    account.refresh_from_db()
    assert account.held_micros == 0
    assert _balance(gateway.base_url, alice.test_key) == format_usd(FUNDS_MICROS)
    assert not LedgerEntry.objects.filter(account=account, type="api_call").exists()
    call_command("check_ledger")

    # The new worker serves and charges as before.
    answer = _run(gateway.base_url, alice.live_key)
    assert answer.status_code == 200, answer.text
    assert answer.json()["billing"]["charged"] is True
    assert _balance(gateway.base_url, alice.test_key) == format_usd(
        FUNDS_MICROS - round(answer.json()["priceCents"] * 10_000)
    )
