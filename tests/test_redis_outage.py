"""Redis stops under a running gateway (gunicorn, on the test database and a Redis of the test's
own, killed mid-test): every /v1 route keeps answering, rate limits count in the process and are
still enforced, one line in the log says so, a key revoked meanwhile is refused, the health
check reports the cache, and once Redis is back the gateway uses it again."""

import time

import pytest
import redis
import requests
from django.core.management import call_command

from credits.models import LedgerEntry
from credits.services.accounts import account_for_user
from gateway.services import api_key_revoke
from tests.factories import api_key_row, fund
from tests.fault_processes import (
    free_port,
    gateway_serving,
    private_redis,
    shared_database_url,
    wait_until,
)

pytestmark = pytest.mark.django_db(transaction=True)

FUNDS_MICROS = 5_000_000
RATE_LIMIT = 12
CACHE_KEY_PREFIX = "gw-redis-outage"
OUTAGE_LINE = "Redis is unreachable"
RECOVERY_LINE = "Redis answers again"
LOCAL_KEY_SECONDS = 1.0

RUN = {"api": "hunter", "path": "/v2/email-verifier", "query": {"email": "ada@stripe.com"}}
ROUTES = [
    ("GET", "/v1/whoami", None),
    ("POST", "/v1/search", {"prompt": "verify an email address", "limit": 3}),
    ("GET", "/v1/list-endpoints?limit=3", None),
    ("POST", "/v1/details", {"api": "hunter", "path": "/v2/email-verifier"}),
    ("POST", "/v1/integrate", {"api": "hunter", "path": "/v2/email-verifier", "format": "curl"}),
    ("POST", "/v1/run", RUN),
    ("GET", "/v1/credits/balance", None),
    ("POST", "/v1/credits/check", {"amountCents": 1}),
    ("GET", "/v1/credits/usage?limit=5", None),
    ("GET", "/v1/credits/transactions?limit=5", None),
    ("GET", "/v1/openapi.json", None),
]


@pytest.fixture
def redis_server(tmp_path):
    with private_redis(tmp_path) as server:
        yield server


@pytest.fixture
def gateway(settings, tmp_path, redis_server):
    port = free_port()
    # The seed catalog points its APIs at the sandbox when it is loaded: the gateway's own.
    settings.SANDBOX_BASE_URL = f"http://127.0.0.1:{port}/sandbox"
    call_command("load_catalog", "--strict", verbosity=0)
    env = {
        "DATABASE_URL": shared_database_url(),
        "REDIS_URL": redis_server.url(),
        "CACHE_KEY_PREFIX": CACHE_KEY_PREFIX,
        "SECRET_KEY": settings.SECRET_KEY,
        "CATALOG_SECRET_KEY": ",".join(settings.CATALOG_SECRET_KEY),
        "SANDBOX_BASE_URL": settings.SANDBOX_BASE_URL,
        "LIVE_CALLS_USE_SANDBOX": "True",
        "API_KEY_LOCAL_CACHE_SECONDS": str(LOCAL_KEY_SECONDS),
    }
    # One worker: the outage is logged once per process.
    with gateway_serving(port=port, env=env, log_path=tmp_path / "gateway.log") as serving:
        yield serving


def _call(base_url: str, key: str | None, method: str, path: str, body=None) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return requests.request(method, f"{base_url}{path}", json=body, headers=headers, timeout=30)


def _every_route(base_url: str, key: str) -> dict[str, int]:
    return {
        path: _call(base_url, key, method, path, body).status_code for method, path, body in ROUTES
    }


def _in_one_rate_window(seconds_needed: int = 20) -> None:
    """Rate limits count in fixed minutes of the wall clock: wait for a minute with room for the
    burst, so that its counter cannot start again in the middle."""
    left = 60 - time.time() % 60
    if left < seconds_needed:
        time.sleep(left + 0.5)


def test_with_redis_gone_the_gateway_answers_and_counts_rate_limits_in_the_process(
    gateway, redis_server, alice, bob, charlie
):
    fund(alice.user, FUNDS_MICROS)
    limited = api_key_row(bob.live_key)
    limited.rate_limit_per_minute = RATE_LIMIT
    limited.save(update_fields=["rate_limit_per_minute"])
    everything_answers = {path: 200 for _, path, _ in ROUTES}
    assert _every_route(gateway.base_url, alice.test_key) == everything_answers
    assert _call(gateway.base_url, alice.live_key, "POST", "/v1/run", RUN).status_code == 200
    # The outsider's key is cached in Redis and in the worker before Redis goes.
    assert _call(gateway.base_url, charlie.live_key, "GET", "/v1/whoami").status_code == 200

    redis_server.kill()

    assert _every_route(gateway.base_url, alice.test_key) == everything_answers
    charged = _call(gateway.base_url, alice.live_key, "POST", "/v1/run", RUN)
    assert charged.status_code == 200, charged.text
    assert charged.json()["billing"]["charged"] is True

    _in_one_rate_window()
    burst = [
        _call(gateway.base_url, bob.live_key, "GET", "/v1/whoami") for _ in range(RATE_LIMIT + 4)
    ]
    assert [answer.status_code for answer in burst] == [200] * RATE_LIMIT + [429] * 4
    assert burst[-1].json()["code"] == "RATE_LIMITED"
    assert int(burst[-1].headers["Retry-After"]) >= 1

    # Revoked while Redis is gone: nothing can drop the key from Redis, and the worker forgets
    # it within API_KEY_LOCAL_CACHE_SECONDS; a cache miss reads the database, which refuses it.
    api_key_revoke(api_key=api_key_row(charlie.live_key))
    time.sleep(LOCAL_KEY_SECONDS + 0.2)
    refused = _call(gateway.base_url, charlie.live_key, "GET", "/v1/whoami")
    assert refused.status_code == 401
    assert refused.json()["code"] == "UNAUTHORIZED"
    assert _call(gateway.base_url, None, "GET", "/v1/whoami").status_code == 401

    health = requests.get(f"{gateway.base_url}/healthz", timeout=10)
    assert health.status_code == 200  # the host keeps serving: a load balancer keeps it
    assert health.json()["status"] == "degraded"
    assert health.json()["database"] == "ok"
    assert health.json()["cache"].startswith("error")

    log = gateway.log()
    assert log.count(OUTAGE_LINE) == 1, log[-3000:]
    assert "Unhandled error" not in log and "Internal Server Error" not in log, log[-3000:]

    redis_server.start()

    def counted_in_redis_again() -> bool:
        _call(gateway.base_url, alice.test_key, "GET", "/v1/whoami")
        client = redis.Redis.from_url(redis_server.url())
        return bool(client.keys(f"{CACHE_KEY_PREFIX}:ratelimit:*"))

    wait_until(counted_in_redis_again, seconds=10, what="rate limits counted in Redis again")
    assert gateway.log().count(RECOVERY_LINE) == 1
    assert requests.get(f"{gateway.base_url}/healthz", timeout=10).json()["status"] == "ok"

    # Two charged runs answered 200 (one with Redis, one without): two charges, and the books
    # balance.
    account = account_for_user(user=alice.user)
    assert LedgerEntry.objects.filter(account=account, type="api_call").count() == 2
    call_command("check_ledger")
