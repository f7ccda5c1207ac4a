"""The Python client against a mocked gateway: what it sends, what it returns, how it fails."""

import json
from types import SimpleNamespace

import pytest
import requests
import responses
import urllib3.util.retry
from gw_client import (
    AuthError,
    Gateway,
    GatewayError,
    InsufficientCredits,
    InvalidRequest,
    NetworkError,
    NotFound,
    RateLimited,
    UpstreamError,
)
from responses import matchers

from tests.http_double import HttpDouble, Reply

BASE = "http://gateway.test"
KEY = "gw_test_" + "k" * 43


@pytest.fixture
def gateway():
    with Gateway(api_key=KEY, base_url=BASE) as client:
        yield client


@pytest.fixture
def mocked():
    with responses.RequestsMock() as mock:
        yield mock


def sent_json(call) -> dict:
    return json.loads(call.request.body)


def test_it_sends_the_key_as_a_bearer_and_returns_the_decoded_answer(gateway, mocked):
    answer = {"success": True, "data": {"key": {"mode": "test"}, "owner": {"type": "user"}}}
    mocked.get(
        f"{BASE}/v1/whoami",
        json=answer,
        match=[matchers.header_matcher({"Authorization": f"Bearer {KEY}"})],
    )

    assert gateway.whoami() == answer
    assert mocked.calls[0].request.headers["User-Agent"] == "gw-client/1.0.0"


def test_it_reads_the_key_and_the_address_from_the_environment(monkeypatch, mocked):
    monkeypatch.setenv("GATEWAY_API_KEY", KEY)
    monkeypatch.setenv("GATEWAY_BASE_URL", "http://elsewhere.test/")
    mocked.get(
        "http://elsewhere.test/v1/credits/balance",
        json={"success": True, "balance": "$1.00"},
        match=[matchers.header_matcher({"Authorization": f"Bearer {KEY}"})],
    )

    assert Gateway().balance()["balance"] == "$1.00"


def test_it_defaults_to_the_local_gateway(monkeypatch):
    monkeypatch.delenv("GATEWAY_BASE_URL", raising=False)

    assert Gateway(api_key=KEY).base_url == "http://127.0.0.1:8000"


def test_without_a_key_it_refuses_to_start_and_names_the_variable(monkeypatch):
    monkeypatch.delenv("GATEWAY_API_KEY", raising=False)

    with pytest.raises(AuthError, match="GATEWAY_API_KEY"):
        Gateway()


def test_an_address_without_a_scheme_is_refused(monkeypatch):
    with pytest.raises(InvalidRequest, match="http://"):
        Gateway(api_key=KEY, base_url="gateway.test:8000")


def test_search_sends_the_prompt_and_the_limit_only_when_given(gateway, mocked):
    mocked.post(f"{BASE}/v1/search", json={"success": True, "results": []})

    gateway.search("emails at a domain", limit=3)
    gateway.search("emails at a domain")

    assert sent_json(mocked.calls[0]) == {"prompt": "emails at a domain", "limit": 3}
    assert sent_json(mocked.calls[1]) == {"prompt": "emails at a domain"}


def test_list_endpoints_sends_its_filters_as_query_parameters(gateway, mocked):
    mocked.get(
        f"{BASE}/v1/list-endpoints",
        json={"success": True, "apis": []},
        match=[
            matchers.query_param_matcher(
                {"limit": "5", "offset": "10", "verified": "true", "isPayable": "false"}
            )
        ],
    )
    mocked.get(
        f"{BASE}/v1/list-endpoints",
        json={"success": True, "apis": []},
        match=[matchers.query_param_matcher({})],
    )

    gateway.list_endpoints(limit=5, offset=10, verified=True, is_payable=False)
    gateway.list_endpoints()


def test_usage_and_transactions_send_their_window_and_page(gateway, mocked):
    mocked.get(
        f"{BASE}/v1/credits/usage",
        json={"success": True, "usage": []},
        match=[matchers.query_param_matcher({"days": "7", "limit": "20", "offset": "40"})],
    )
    mocked.get(
        f"{BASE}/v1/credits/transactions",
        json={"success": True, "transactions": []},
        match=[matchers.query_param_matcher({"limit": "2"})],
    )

    gateway.usage(days=7, limit=20, offset=40)
    gateway.transactions(limit=2)


def test_api_pages_through_the_catalog_until_it_finds_the_slug(gateway, mocked):
    def page(slugs, has_more):
        apis = [{"slug": slug, "endpoints": []} for slug in slugs]
        return {"apis": apis, "count": len(apis), "pagination": {"hasMore": has_more}}

    mocked.get(
        f"{BASE}/v1/list-endpoints",
        json=page(["adzuna", "apify"], True),
        match=[matchers.query_param_matcher({"limit": "500", "offset": "0"})],
    )
    mocked.get(
        f"{BASE}/v1/list-endpoints",
        json=page(["hunter"], False),
        match=[matchers.query_param_matcher({"limit": "500", "offset": "2"})],
    )

    assert gateway.api("hunter")["slug"] == "hunter"
    with pytest.raises(NotFound, match="'nosuch'"):
        gateway.api("nosuch")


def test_details_and_integrate_name_the_endpoint(gateway, mocked):
    mocked.post(f"{BASE}/v1/details", json={"success": True})
    mocked.post(f"{BASE}/v1/integrate", json={"success": True})

    gateway.details("lusha", "/v2/person", method="GET")
    gateway.integrate("hunter", "/v2/domain-search", "curl")

    assert sent_json(mocked.calls[0]) == {"api": "lusha", "path": "/v2/person", "method": "GET"}
    assert sent_json(mocked.calls[1]) == {
        "api": "hunter",
        "path": "/v2/domain-search",
        "format": "curl",
    }


def test_run_sends_the_call_in_the_gateways_field_names(gateway, mocked):
    mocked.post(
        f"{BASE}/v1/run",
        json={"success": True, "priceCents": 1, "data": {}, "requestId": "run_1_a"},
        match=[matchers.header_matcher({"Idempotency-Key": "order-17"})],
    )

    gateway.run(
        "firecrawl",
        "/v1/crawl/{id}",
        query={"limit": 5},
        body={"url": "https://example.com"},
        path_params={"id": "abc"},
        parent_request_id="run_0_b",
        method="GET",
        idempotency_key="order-17",
    )

    assert sent_json(mocked.calls[0]) == {
        "api": "firecrawl",
        "path": "/v1/crawl/{id}",
        "query": {"limit": 5},
        "body": {"url": "https://example.com"},
        "pathParams": {"id": "abc"},
        "parentRequestId": "run_0_b",
        "method": "GET",
    }


def test_run_leaves_out_what_it_was_not_given(gateway, mocked):
    mocked.post(f"{BASE}/v1/run", json={"success": True})

    gateway.run("hunter", "/v2/domain-search", query={"domain": "stripe.com"})

    assert sent_json(mocked.calls[0]) == {
        "api": "hunter",
        "path": "/v2/domain-search",
        "query": {"domain": "stripe.com"},
    }
    assert "Idempotency-Key" not in mocked.calls[0].request.headers


def test_check_asks_for_an_amount_in_cents(gateway, mocked):
    answer = {"success": True, "sufficient": False, "shortfallCents": 50}
    mocked.post(f"{BASE}/v1/credits/check", json=answer)

    assert gateway.check(150) == answer
    assert sent_json(mocked.calls[0]) == {"amountCents": 150}


@pytest.mark.parametrize(
    ("status", "code", "error_class"),
    [
        (400, "INVALID_REQUEST", InvalidRequest),
        (401, "UNAUTHORIZED", AuthError),
        (402, "INSUFFICIENT_CREDITS", InsufficientCredits),
        (403, "FORBIDDEN", AuthError),
        (404, "NOT_FOUND", NotFound),
        (409, "IDEMPOTENCY_IN_PROGRESS", InvalidRequest),
        (413, "PAYLOAD_TOO_LARGE", InvalidRequest),
        (422, "IDEMPOTENCY_MISMATCH", InvalidRequest),
        (502, "UPSTREAM_ERROR", UpstreamError),
        (504, "UPSTREAM_ERROR", UpstreamError),
        (500, "INTERNAL_ERROR", GatewayError),
    ],
)
def test_each_error_status_raises_its_class(gateway, mocked, status, code, error_class):
    envelope = {"success": False, "error": "it went wrong", "code": code}
    mocked.post(f"{BASE}/v1/run", status=status, json=envelope)

    with pytest.raises(GatewayError) as raised:
        gateway.run("hunter", "/v2/domain-search")

    assert type(raised.value) is error_class
    assert raised.value.message == "it went wrong"
    assert raised.value.code == code
    assert raised.value.status == status


def test_a_providers_own_404_is_an_upstream_error_with_its_status_and_data(gateway, mocked):
    envelope = {
        "success": False,
        "error": "The provider answered 404: no such domain",
        "code": "UPSTREAM_ERROR",
        "data": {"errors": [{"id": "not_found"}]},
        "upstreamStatus": 404,
        "requestId": "run_1_abc",
    }
    mocked.post(f"{BASE}/v1/run", status=404, json=envelope)

    with pytest.raises(UpstreamError) as raised:
        gateway.run("hunter", "/v2/domain-search")

    assert raised.value.upstream_status == 404
    assert raised.value.data == {"errors": [{"id": "not_found"}]}
    assert raised.value.request_id == "run_1_abc"


def test_an_error_names_the_request_from_the_header_when_the_body_does_not(gateway, mocked):
    mocked.post(
        f"{BASE}/v1/run",
        status=402,
        json={"success": False, "error": "short", "code": "INSUFFICIENT_CREDITS", "priceCents": 25},
        headers={"X-Request-Id": "run_2_def"},
    )

    with pytest.raises(InsufficientCredits) as raised:
        gateway.run("hunter", "/v2/domain-search")

    assert raised.value.request_id == "run_2_def"
    assert raised.value.price_cents == 25


def test_an_error_page_that_is_not_json_still_raises_by_its_status(gateway, mocked):
    mocked.get(f"{BASE}/v1/credits/balance", status=502, body="<html>Bad gateway</html>")

    with pytest.raises(UpstreamError, match="HTTP 502"):
        gateway.balance()


def test_a_success_that_is_not_json_says_the_address_may_be_wrong(gateway, mocked):
    mocked.get(f"{BASE}/v1/credits/balance", body="<html>a web page</html>")

    with pytest.raises(GatewayError, match="GATEWAY_BASE_URL"):
        gateway.balance()


def rate_limited(retry_after: str = "1") -> dict:
    return {
        "status": 429,
        "json": {"success": False, "error": "Too many requests", "code": "RATE_LIMITED"},
        "headers": {"Retry-After": retry_after},
    }


def test_a_rate_limited_request_is_retried(gateway, mocked):
    mocked.post(f"{BASE}/v1/run", **rate_limited())
    mocked.post(f"{BASE}/v1/run", json={"success": True, "requestId": "run_3_a"})

    assert gateway.run("hunter", "/v2/domain-search")["requestId"] == "run_3_a"
    assert len(mocked.calls) == 2


def test_after_its_retries_a_rate_limited_request_raises_with_the_wait_asked(mocked):
    mocked.get(f"{BASE}/v1/credits/balance", **rate_limited("17"))

    with pytest.raises(RateLimited) as raised:
        Gateway(api_key=KEY, base_url=BASE, max_retries=2).balance()

    assert raised.value.retry_after == 17
    assert len(mocked.calls) == 3


def test_with_no_retries_a_rate_limited_request_is_sent_once(mocked):
    mocked.get(f"{BASE}/v1/credits/balance", **rate_limited())

    with pytest.raises(RateLimited):
        Gateway(api_key=KEY, base_url=BASE, max_retries=0).balance()

    assert len(mocked.calls) == 1


@pytest.fixture
def double():
    with HttpDouble() as server:
        yield server


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The waits urllib3's Retry asks for, recorded instead of slept."""
    asked: list[float] = []
    monkeypatch.setattr(
        urllib3.util.retry, "time", SimpleNamespace(sleep=asked.append, time=lambda: 0)
    )
    return asked


@pytest.mark.parametrize(("retry_after", "waited"), [("2", 2), ("3600", 5)])
def test_it_waits_what_retry_after_asks_but_never_more_than_its_bound(
    double, waits, retry_after, waited
):
    answers = iter([Reply(429, {"code": "RATE_LIMITED"}, {"Retry-After": retry_after})])
    double.routes["/v1/credits/balance"] = lambda seen: next(
        answers, Reply(200, {"success": True, "balance": "$1.00"})
    )

    gateway = Gateway(api_key=KEY, base_url=double.url, max_retry_wait=5)

    assert gateway.balance()["balance"] == "$1.00"
    assert waits == [waited]


def test_the_timeout_is_given_to_every_request(mocked):
    mocked.get(f"{BASE}/v1/credits/balance", json={"success": True})

    Gateway(api_key=KEY, base_url=BASE, timeout=7).balance()

    assert mocked.calls[0].request.req_kwargs["timeout"] == 7


def test_a_timeout_is_a_network_error(gateway, mocked):
    mocked.get(f"{BASE}/v1/credits/balance", body=requests.exceptions.ReadTimeout())

    with pytest.raises(NetworkError, match="did not answer within 30 s") as raised:
        gateway.balance()

    assert raised.value.code == "TIMEOUT"


def test_a_refused_connection_is_a_network_error(gateway, mocked):
    mocked.get(f"{BASE}/v1/credits/balance", body=requests.exceptions.ConnectionError())

    with pytest.raises(NetworkError, match=r"cannot reach the gateway at http://gateway\.test"):
        gateway.balance()


def test_a_paid_call_that_timed_out_is_not_sent_again(double):
    double.routes["/v1/run"] = Reply(delay=1, reset=True)

    with pytest.raises(NetworkError, match="retry with the same Idempotency-Key"):
        Gateway(api_key=KEY, base_url=double.url, timeout=0.2).run("hunter", "/v2/domain-search")

    assert len(double.seen) == 1
