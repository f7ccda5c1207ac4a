"""Fault injection by query parameter, header or body field."""

import time

import pytest
import requests

from tests.sandbox.conftest import content_of

VERIFY = ("hunter", "GET", "/v2/email-verifier")


def _verify(sandbox, headers=None, **faults):
    slug, method, path = VERIFY
    return sandbox.call(slug, method, path, query={"email": "a@b.io", **faults}, headers=headers)


def test_a_delay_is_slept_before_the_normal_answer(sandbox):
    started = time.perf_counter()
    response = _verify(sandbox, sandbox_delay_ms=250)
    assert time.perf_counter() - started >= 0.25
    assert response.status_code == 200
    assert response.json()["data"]["email"] == "a@b.io"


def test_the_delay_fault_without_a_duration_sleeps_a_second(sandbox, monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    assert _verify(sandbox, sandbox_fault="delay").status_code == 200
    assert slept == [1.0]


def test_delays_are_capped_at_thirty_seconds(sandbox, monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    _verify(sandbox, sandbox_delay_ms=90_000)
    assert slept == [30.0]


@pytest.mark.parametrize("status", [500, 503, 502, 404])
def test_an_error_status_is_answered_in_the_provider_style(sandbox, status):
    response = _verify(sandbox, sandbox_fault=str(status))
    assert response.status_code == status
    assert response.json()["errors"][0]["code"] == status


def test_a_429_carries_retry_after_one_by_default(sandbox):
    response = _verify(sandbox, sandbox_fault="429")
    assert response.status_code == 429
    assert response["Retry-After"] == "1"


def test_the_retry_after_of_a_429_is_configurable(sandbox):
    response = _verify(sandbox, sandbox_fault="429", sandbox_retry_after="7")
    assert response["Retry-After"] == "7"


def test_a_503_carries_retry_after_only_when_asked(sandbox):
    assert not _verify(sandbox, sandbox_fault="503").has_header("Retry-After")
    assert _verify(sandbox, sandbox_fault="503", sandbox_retry_after="1")["Retry-After"] == "1"


def test_faults_can_be_asked_for_by_header(sandbox):
    response = _verify(sandbox, headers={"X-Sandbox-Fault": "503"})
    assert response.status_code == 503


def test_faults_can_be_asked_for_by_body_field_and_are_not_part_of_the_input(sandbox):
    body = {"url": "https://acme.io", "sandbox_fault": "500"}
    assert sandbox.call("firecrawl", "POST", "/v1/scrape", body=body).status_code == 500
    normal = sandbox.call("firecrawl", "POST", "/v1/scrape", body={"url": "https://acme.io"})
    delayed = sandbox.call(
        "firecrawl", "POST", "/v1/scrape", body={"url": "https://acme.io", "sandbox_delay_ms": 1}
    )
    assert delayed.content == normal.content


def test_oversize_streams_a_body_larger_than_the_asked_size(sandbox):
    response = _verify(sandbox, sandbox_fault="oversize", sandbox_size_mb="1.5")
    assert response.status_code == 200
    assert not response.has_header("Content-Length")
    assert len(content_of(response)) > 1.5 * 1024 * 1024


def test_badjson_is_a_200_whose_body_does_not_parse(sandbox):
    response = _verify(sandbox, sandbox_fault="badjson")
    assert response.status_code == 200
    with pytest.raises(ValueError):
        response.json()


def test_empty_is_a_200_without_a_body(sandbox):
    response = _verify(sandbox, sandbox_fault="empty")
    assert response.status_code == 200
    assert response.content == b""


def test_fail_times_fails_the_first_requests_of_a_key_and_then_succeeds(sandbox):
    faults = {"sandbox_fault": "503", "sandbox_fail_times": "2", "sandbox_fault_key": "k1"}
    statuses = [_verify(sandbox, **faults).status_code for _ in range(4)]
    assert statuses == [503, 503, 200, 200]
    assert _verify(sandbox, **{**faults, "sandbox_fault_key": "k2"}).status_code == 503


def test_fail_times_without_a_key_counts_identical_requests(sandbox):
    faults = {"sandbox_fault": "500", "sandbox_fail_times": "1"}
    assert [_verify(sandbox, **faults).status_code for _ in range(2)] == [500, 200]


def test_an_unknown_fault_is_refused(sandbox):
    response = _verify(sandbox, sandbox_fault="explode")
    assert response.status_code == 400
    assert "sandbox_fault must be one of" in response.json()["errors"][0]["details"]


def test_the_ping_honours_faults_too(sandbox):
    assert sandbox.client.get("/sandbox/_ping?sandbox_fault=503").status_code == 503


def test_reset_without_a_real_socket_falls_back_to_a_502(sandbox):
    response = _verify(sandbox, sandbox_fault="reset")
    assert response.status_code == 502
    assert "needs a real client socket" in response.json()["errors"][0]["details"]


def test_reset_aborts_the_connection_on_a_live_server(live_server):
    url = f"{live_server.url}/sandbox/hunter/v2/email-verifier"
    with pytest.raises(requests.ConnectionError):
        requests.get(url, params={"email": "a@b.io", "sandbox_fault": "reset"}, timeout=5)
    ok = requests.get(url, params={"email": "a@b.io"}, timeout=5)
    assert ok.status_code == 200


def test_timeout_holds_the_answer_past_a_client_timeout(live_server):
    url = f"{live_server.url}/sandbox/_ping"
    with pytest.raises(requests.ReadTimeout):
        requests.get(url, params={"sandbox_fault": "timeout"}, timeout=0.5)
