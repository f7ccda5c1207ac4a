import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections
from django.test import override_settings
from rest_framework.test import APIClient

from gateway.models import ApiKey
from gateway.services import api_key_create
from tests.factories import make_persona


def concurrent_statuses(secret: str, requests: int) -> list[int]:
    barrier = threading.Barrier(requests)

    def one_request(_):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        try:
            barrier.wait()
            return client.get("/v1/whoami").status_code
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=requests) as pool:
        return list(pool.map(one_request, range(requests)))


@pytest.mark.django_db(transaction=True)
def test_n_plus_one_concurrent_requests_let_exactly_n_through():
    limit = 20
    persona = make_persona("dora@example.com")
    ApiKey.objects.filter(user=persona.user).update(rate_limit_per_minute=limit)

    statuses = concurrent_statuses(persona.live_key, limit + 1)

    assert statuses.count(200) == limit
    assert statuses.count(429) == 1


def test_a_limited_key_gets_the_envelope_with_retry_after(client_for, alice):
    _, secret = api_key_create(mode="live", user=alice.user, rate_limit_per_minute=2)
    client = client_for(secret)
    assert [client.get("/v1/whoami").status_code for _ in range(2)] == [200, 200]

    response = client.get("/v1/whoami")

    assert response.status_code == 429
    body = response.json()
    assert body["success"] is False and body["code"] == "RATE_LIMITED"
    assert 1 <= int(response["Retry-After"]) <= 60


def test_limits_are_per_key(client_for, alice):
    _, limited = api_key_create(mode="live", user=alice.user, rate_limit_per_minute=1)
    client_for(limited).get("/v1/whoami")
    assert client_for(limited).get("/v1/whoami").status_code == 429
    assert client_for(alice.live_key).get("/v1/whoami").status_code == 200


@override_settings(RATE_LIMIT_PER_MINUTE=3)
def test_the_default_limit_comes_from_settings(client_for, alice):
    statuses = [client_for(alice.test_key).get("/v1/whoami").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]


@override_settings(
    CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
    RATE_LIMIT_PER_MINUTE=3,
)
def test_the_in_process_counter_limits_too(client_for, alice):
    statuses = [client_for(alice.live_key).get("/v1/whoami").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
