"""Shared fixtures: the personas alice (an owner), bob (a member of alice's organization) and
charlie (an outsider), each with keys, plus an API client factory."""

import time
from types import SimpleNamespace

import pytest
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from catalog.selectors import route_cache_clear
from credits.services.accounts import account_ids_forget
from gateway import key_cache, ratelimit
from tests.factories import KeyedPersona, fund, make_persona


def pytest_configure(config):
    from django.conf import settings

    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in engine:
        pytest.exit(
            f"The test suite runs on PostgreSQL, not {engine}: set DATABASE_URL "
            "(`make test` does) to postgres://postgres@127.0.0.1:5432/gateway",
            returncode=2,
        )


@pytest.fixture(autouse=True)
def _quick_password_hashing(settings):
    """Passwords set by the tests are hashed with one round of MD5: PBKDF2's million iterations
    take about a second on a 2-core machine, for every persona every test creates. Hashes made
    with the served hashers (by a gateway the test starts as a process) still verify."""
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        *settings.PASSWORD_HASHERS,
    ]


@pytest.fixture(autouse=True)
def _fresh_caches(settings):
    """Every test starts with empty caches; catalog edits are seen at once, as they happen."""
    settings.CATALOG_VERSION_CHECK_SECONDS = 0
    cache.clear()
    route_cache_clear()
    key_cache.forget()
    account_ids_forget()
    yield
    cache.clear()


# Where the rails ask to be paid in the test suite: they are on, as in a deployment that set
# RAIL_PAY_TO.
RAIL_PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"


@pytest.fixture(autouse=True)
def _rails_on(settings):
    settings.RAIL_PAY_TO = RAIL_PAY_TO
    settings.RAILS_ENABLED = True


@pytest.fixture(autouse=True)
def _steady_rate_limit_windows(monkeypatch):
    """Rate limits count in fixed windows (a minute for keys, an hour for password-reset
    emails). A test that sends N requests and expects the next one refused would see the counter
    start again if it ran across a window's end, so the limiter's clock stands still in the middle
    of both kinds of window for the length of a test."""
    now = time.time()
    middle = now - now % 3600 + 1830  # 30 s into a minute, 1830 s into an hour
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: middle))


@pytest.fixture
def alice(db) -> KeyedPersona:
    return make_persona("alice@example.com", org_slug="acme")


@pytest.fixture
def bob(db, alice) -> KeyedPersona:
    return make_persona("bob@example.com", member_of=alice.organization)


@pytest.fixture
def charlie(db) -> KeyedPersona:
    return make_persona("charlie@example.com")


@pytest.fixture
def client_for():
    """client_for(secret) -> an API client sending that bearer key (None sends none)."""

    def build(secret: str | None) -> APIClient:
        client = APIClient()
        if secret is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        return client

    return build


@pytest.fixture(params=["one-statement", "portable"])
def both_settlements(request, settings):
    """Run a money test against both implementations of reserve and capture."""
    settings.CREDITS_ONE_STATEMENT_SETTLEMENT = request.param == "one-statement"
    return request.param


@pytest.fixture
def gateway(live_server, settings):
    """The live gateway with the seed catalog loaded, its sandboxes served by itself (for the
    end-to-end tests: mark them django_db(transaction=True))."""
    settings.GATEWAY_BASE_URL = live_server.url
    settings.SANDBOX_BASE_URL = f"{live_server.url}/sandbox"
    call_command("load_catalog", "--strict", verbosity=0)
    return live_server.url


@pytest.fixture
def newcomer(gateway):
    """A person with keys and $5 on the live gateway."""
    persona = make_persona("newcomer@example.com")
    fund(persona.user, 5_000_000)
    return persona
