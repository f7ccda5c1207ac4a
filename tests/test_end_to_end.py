"""The seed catalog run end to end over HTTP: a live gateway, the built-in sandbox as every
provider, real keys. What a newcomer does after `make run`."""

import json
import os
import subprocess
import sys

import pytest
import requests
from django.core.management import call_command

from credits.models import LedgerEntry, UsageEvent

pytestmark = pytest.mark.django_db(transaction=True)


def run(gateway, key, **payload):
    return requests.post(
        f"{gateway}/v1/run", json=payload, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def balance(gateway, key) -> str:
    response = requests.get(
        f"{gateway}/v1/credits/balance", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    return response.json()["balance"]


def test_a_test_key_runs_a_seed_endpoint_on_the_sandbox_for_free(gateway, newcomer):
    response = run(
        gateway,
        newcomer.test_key,
        api="hunter",
        path="/v2/domain-search",
        query={"domain": "stripe.com", "limit": 3},
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert len(body["data"]["data"]["emails"]) == 3
    assert body["priceCents"] == 0.75
    assert body["billing"]["charged"] is False
    assert balance(gateway, newcomer.test_key) == "$5.00"
    assert UsageEvent.objects.get(request_id=body["requestId"]).mode == "test"


def test_a_live_key_on_a_sandbox_backed_catalog_is_charged_what_the_answer_says(
    gateway, newcomer, settings
):
    settings.LIVE_CALLS_USE_SANDBOX = True
    response = run(
        gateway,
        newcomer.live_key,
        api="hunter",
        path="/v2/domain-search",
        query={"domain": "stripe.com", "limit": 4},
    )

    body = response.json()
    assert response.status_code == 200, response.text
    assert body["billing"]["charged"] is True
    assert body["priceCents"] == 4 * 0.25
    assert balance(gateway, newcomer.live_key) == "$4.99"
    revenue = LedgerEntry.objects.get(event_ref=f"call:{body['requestId']}", type="revenue")
    assert revenue.account.organization.slug == "hunter"
    call_command("check_ledger")


def test_an_asynchronous_crawl_is_charged_once_and_polled_to_completion(
    gateway, newcomer, settings
):
    settings.LIVE_CALLS_USE_SANDBOX = True
    started = run(
        gateway,
        newcomer.live_key,
        api="firecrawl",
        path="/v1/crawl",
        body={"url": "https://example.com", "limit": 5},
    )
    assert started.status_code == 200, started.text
    crawl_id = started.json()["data"]["id"]

    # The status path also has a DELETE (cancel), so the method is named.
    polls = [
        run(gateway, newcomer.live_key, api="firecrawl", path=f"/v1/crawl/{crawl_id}", method="GET")
        for _ in range(2)
    ]

    assert [poll.json()["data"]["status"] for poll in polls] == ["scraping", "completed"]
    assert all(poll.json()["billing"]["charged"] is False for poll in polls)
    assert len(polls[-1].json()["data"]["data"]) >= 1
    charged = LedgerEntry.objects.filter(account__user=newcomer.user, type="api_call")
    assert charged.count() == 1


def test_a_chat_completion_is_charged_by_the_tokens_it_used(gateway, newcomer, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True
    response = run(
        gateway,
        newcomer.live_key,
        api="zhipu-glm",
        path="/api/paas/v4/chat/completions",
        body={
            "model": "glm-4-plus",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Say hello to the gateway"}],
        },
    )

    assert response.status_code == 200, response.text
    body = response.json()
    usage = body["data"]["usage"]
    expected_micros = -(
        -(usage["prompt_tokens"] * 600_000 + usage["completion_tokens"] * 2_200_000) // 1_000_000
    )
    entry = LedgerEntry.objects.get(event_ref=f"call:{body['requestId']}", type="api_call")
    assert entry.amount_micros == -expected_micros
    assert body["data"]["choices"][0]["message"]["role"] == "assistant"


def test_a_provider_failure_in_the_sandbox_is_not_charged(gateway, newcomer, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True
    response = run(
        gateway,
        newcomer.live_key,
        api="zerobounce",
        path="/v2/validate",
        query={"email": "a@b.co", "sandbox_fault": "503"},
    )
    assert response.status_code == 502
    assert response.json()["upstreamStatus"] == 503
    assert balance(gateway, newcomer.live_key) == "$5.00"


def integrate(gateway, key, fmt, **endpoint):
    endpoint = endpoint or {"api": "zerobounce", "path": "/v2/validate"}
    response = requests.post(
        f"{gateway}/v1/integrate",
        json={**endpoint, "format": fmt},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()["snippets"][fmt]


def test_the_curl_and_run_api_snippets_work_as_written(gateway, newcomer):
    environment = {**os.environ, "GATEWAY_API_KEY": newcomer.test_key, "GATEWAY_BASE_URL": gateway}

    curl = subprocess.run(
        ["bash", "-c", integrate(gateway, newcomer.test_key, "curl")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )
    python = subprocess.run(
        [sys.executable, "-c", integrate(gateway, newcomer.test_key, "run-api")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert curl.returncode == 0, curl.stderr
    curl_answer = json.loads(curl.stdout)
    assert curl_answer["success"] is True
    assert curl_answer["data"]["status"] in {"valid", "invalid", "catch-all", "unknown"}
    assert python.returncode == 0, python.stderr
    assert python.stdout.splitlines()[0] == "200"


def test_a_snippet_for_a_path_with_several_methods_runs_the_method_it_was_made_for(
    gateway, newcomer
):
    environment = {**os.environ, "GATEWAY_API_KEY": newcomer.test_key, "GATEWAY_BASE_URL": gateway}
    for method in ("GET", "POST"):  # Lusha's /v2/person answers both
        snippet = integrate(
            gateway, newcomer.test_key, "curl", api="lusha", path="/v2/person", method=method
        )
        curl = subprocess.run(
            ["bash", "-c", snippet], env=environment, capture_output=True, text=True, timeout=30
        )
        assert curl.returncode == 0, curl.stderr
        answer = json.loads(curl.stdout)
        assert answer["success"] is True, answer
        assert UsageEvent.objects.get(request_id=answer["requestId"]).method == method


def test_the_example_run_call_of_every_seed_endpoint_succeeds_on_the_sandbox(
    gateway, newcomer, settings
):
    settings.RATE_LIMIT_ENABLED = False  # 400 calls in a few seconds, one key
    headers = {"Authorization": f"Bearer {newcomer.test_key}"}
    listing = requests.get(f"{gateway}/v1/list-endpoints?limit=500", headers=headers, timeout=30)
    failures = []
    for api in listing.json()["apis"]:
        for endpoint in api["endpoints"]:
            where = {"api": api["slug"], "path": endpoint["path"], "method": endpoint["method"]}
            details = requests.post(
                f"{gateway}/v1/details", json=where, headers=headers, timeout=10
            )
            call = json.loads(details.json()["usage"]["runApi"].split(" ", 2)[2])
            response = requests.post(f"{gateway}/v1/run", json=call, headers=headers, timeout=30)
            if response.status_code != 200:
                failures.append(f"{call} -> {response.status_code} {response.text[:200]}")
    assert listing.json()["totalEndpoints"] > 200
    assert failures == []
