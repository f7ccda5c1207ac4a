"""POST /v1/run: a provider's 2xx that is not what its endpoint documents is an upstream error,
answered 502 and never charged, whatever the endpoint's price kind."""

import pytest
import responses
from django.core.management import call_command

from credits.models import Hold, UsageEvent
from tests.calls.conftest import PROVIDER_URL
from tests.factories import fund

TRUNCATED = b'{"data": {"emails": [{"value": "a@stripe.com"'
CHAT_BODY = {"model": "glm-4", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 50}

# (the endpoint's price kind, how the provider is registered, the run request)
CALLS = {
    "fixed": (
        responses.POST,
        "/v1/people/enrich",
        {"path": "/v1/people/enrich", "body": {"email": "a@b.co"}},
    ),
    "per_result": (
        responses.GET,
        "/v2/domain-search",
        {"path": "/v2/domain-search", "query": {"domain": "stripe.com", "limit": 5}},
    ),
    "dynamic": (
        responses.POST,
        "/api/paas/v4/chat/completions",
        {"path": "/api/paas/v4/chat/completions", "body": CHAT_BODY},
    ),
}
BROKEN = {
    "truncated JSON": (TRUNCATED, "application/json", "not valid JSON"),
    "an empty JSON body": (b"", "application/json", "an empty body"),
    "an empty body": (b"", "text/plain", "an empty body"),
    "JSON in another type": (b"\xff\xfe not utf-8", "application/problem+json", "not valid JSON"),
}


@pytest.fixture
def funded(alice):
    return fund(alice.user, 10_000_000)


def assert_not_charged(funded):
    funded.refresh_from_db()
    assert funded.balance_micros == 10_000_000
    assert Hold.objects.get().status == "released"
    assert UsageEvent.objects.get().status == "failed"
    call_command("check_ledger")


@pytest.mark.parametrize("kind", CALLS)
@pytest.mark.parametrize("broken", BROKEN)
@responses.activate
def test_a_broken_answer_is_a_502_and_not_charged_for_every_price_kind(
    run, alice, leads, funded, kind, broken
):
    method, provider_path, request = CALLS[kind]
    content, content_type, reason = BROKEN[broken]
    responses.add(method, f"{PROVIDER_URL}{provider_path}", body=content, content_type=content_type)

    response = run(alice.live_key, api="leads", **request)

    body = response.json()
    assert response.status_code == 502, body
    assert body["code"] == "UPSTREAM_ERROR"
    assert body["upstreamStatus"] == 200
    assert (
        f"The provider answered 200 with {'an empty body' if not content else 'a body'}"
        in (body["error"])
    )
    assert reason in body["error"]
    assert body["requestId"] == response["X-Request-Id"]
    assert_not_charged(funded)


@pytest.mark.parametrize("kind", ["per_result", "dynamic"])
@responses.activate
def test_an_endpoint_priced_from_its_answer_refuses_an_answer_that_is_not_json(
    run, alice, leads, funded, kind
):
    method, provider_path, request = CALLS[kind]
    responses.add(
        method,
        f"{PROVIDER_URL}{provider_path}",
        body="<html>Service temporarily unavailable</html>",
        content_type="text/html",
    )

    response = run(alice.live_key, api="leads", **request)

    assert response.status_code == 502
    assert response.json()["data"] == "<html>Service temporarily unavailable</html>"
    assert_not_charged(funded)


@responses.activate
def test_a_test_key_gets_the_same_502(run, alice, leads, funded):
    responses.post(
        f"{leads.sandbox_url}/v1/people/enrich", body=TRUNCATED, content_type="application/json"
    )
    response = run(alice.test_key, api="leads", path="/v1/people/enrich", body={"email": "x"})
    assert response.status_code == 502
    assert UsageEvent.objects.get().status == "failed"


def charged(response, funded, price_micros):
    funded.refresh_from_db()
    return (
        response.status_code == 200
        and response.json()["billing"]["charged"] is True
        and funded.balance_micros == 10_000_000 - price_micros
    )


@responses.activate
def test_text_and_binary_answers_of_a_fixed_price_endpoint_are_served_and_charged(
    run, alice, leads, funded
):
    responses.get(f"{PROVIDER_URL}/v1/items", body="not json {", content_type="text/csv")
    response = run(alice.live_key, api="leads", path="/v1/items", method="GET")
    assert response.json()["data"] == "not json {"
    assert charged(response, funded, 10_000)


@pytest.mark.parametrize(
    ("method", "path", "status", "run_body"),
    [
        (responses.GET, "/v1/items", 204, None),
        (responses.DELETE, "/v1/items", 200, None),
        (responses.POST, "/v1/jobs", 202, {"domains": ["a.com"]}),
        (responses.POST, "/v1/jobs", 201, {"domains": ["a.com"]}),
    ],
)
@responses.activate
def test_an_answer_without_content_is_served_where_none_is_documented(
    run, alice, leads, funded, method, path, status, run_body
):
    responses.add(method, f"{PROVIDER_URL}{path}", status=status, body=b"")
    payload = {"api": "leads", "path": path, "method": method}
    if run_body is not None:
        payload["body"] = run_body

    response = run(alice.live_key, **payload)

    assert response.status_code == 200, response.json()
    assert response.json()["data"] is None
    price = 100_000 if path == "/v1/jobs" else 10_000
    assert charged(response, funded, price)
