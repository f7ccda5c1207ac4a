"""Fault injection by query parameter, header or body field."""

import itertools
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


CHAT_PATH = "/sandbox/zhipu-glm/api/paas/v4/chat/completions"
CHAT_STREAM = {
    "model": "glm-4.5",
    "messages": [{"role": "user", "content": "What is a ledger?"}],
    "stream": True,
}


def _chat_stream(sandbox, **knobs):
    return sandbox.call(
        "zhipu-glm", "POST", "/api/paas/v4/chat/completions", body={**CHAT_STREAM, **knobs}
    )


def _data_events(content: bytes) -> list[bytes]:
    return [event for event in content.split(b"\n\n") if event]


def _received(response) -> tuple[list[bytes], Exception | None]:
    """The events a client received, read a byte at a time so that none it received is lost
    in a read buffer, and the error that ended the stream, if any."""
    events = []
    try:
        for line in response.iter_lines(chunk_size=1):
            if line:
                events.append(line)
    except requests.RequestException as error:
        return events, error
    return events, None


def test_reset_after_n_chunks_delivers_exactly_n_chunks_then_breaks_the_connection(live_server):
    url = f"{live_server.url}{CHAT_PATH}"
    knobs = {"sandbox_fault": "reset", "sandbox_after_chunks": "3"}
    with requests.post(url, params=knobs, json=CHAT_STREAM, stream=True, timeout=5) as response:
        assert response.status_code == 200
        events, error = _received(response)

    assert len(events) == 3
    assert b'"role":"assistant"' in events[0]
    assert isinstance(error, requests.exceptions.ChunkedEncodingError)
    assert "Connection reset by peer" in str(error)
    whole = requests.post(url, json=CHAT_STREAM, stream=True, timeout=5)
    assert _received(whole)[0][-1] == b"data: [DONE]"


def test_reset_after_zero_chunks_breaks_the_connection_before_the_answer(live_server):
    url = f"{live_server.url}{CHAT_PATH}"
    knobs = {"sandbox_fault": "reset", "sandbox_after_chunks": "0"}
    with pytest.raises(requests.ConnectionError):
        requests.post(url, params=knobs, json=CHAT_STREAM, stream=True, timeout=5)


def test_stall_after_n_chunks_sends_n_chunks_then_nothing_until_the_read_timeout(
    live_server, monkeypatch
):
    # Shorter than 65 s so that the server thread is not left sleeping, longer than the client.
    monkeypatch.setattr("sandbox.faults.TIMEOUT_SLEEP_SECONDS", 3)
    url = f"{live_server.url}{CHAT_PATH}"
    body = {**CHAT_STREAM, "sandbox_fault": "stall", "sandbox_after_chunks": 2}
    started = time.perf_counter()
    with requests.post(url, json=body, stream=True, timeout=(5, 0.5)) as response:
        events, error = _received(response)

    assert len(events) == 2
    assert isinstance(error, requests.ConnectionError)
    assert "Read timed out" in str(error)
    assert time.perf_counter() - started < 2.5


def test_a_stream_ends_without_done_once_its_stall_is_over(live_server, monkeypatch):
    monkeypatch.setattr("sandbox.faults.TIMEOUT_SLEEP_SECONDS", 0.3)
    url = f"{live_server.url}{CHAT_PATH}"
    knobs = {"sandbox_fault": "stall", "sandbox_after_chunks": "4"}
    with requests.post(url, params=knobs, json=CHAT_STREAM, stream=True, timeout=5) as response:
        events, error = _received(response)

    assert error is None
    assert len(events) == 4
    assert b"[DONE]" not in b"".join(events)


def test_stall_without_a_chunk_count_sends_nothing_before_the_read_timeout(
    live_server, monkeypatch
):
    monkeypatch.setattr("sandbox.faults.TIMEOUT_SLEEP_SECONDS", 3)
    url = f"{live_server.url}{CHAT_PATH}"
    with pytest.raises(requests.ReadTimeout):
        requests.post(url, params={"sandbox_fault": "stall"}, json=CHAT_STREAM, timeout=(5, 0.5))


def test_the_chunk_delay_spaces_the_chunks_the_client_receives(live_server):
    url = f"{live_server.url}{CHAT_PATH}"
    body = {**CHAT_STREAM, "max_tokens": 3}
    arrivals = []
    with requests.post(
        url, params={"sandbox_chunk_delay_ms": "100"}, json=body, stream=True, timeout=5
    ) as response:
        for line in response.iter_lines(chunk_size=1):
            if line:
                arrivals.append(time.perf_counter())

    assert len(arrivals) >= 5
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.08


def test_the_chunk_delay_is_capped_at_a_second_and_leaves_the_reply_alone(sandbox, monkeypatch):
    plain = content_of(_chat_stream(sandbox, max_tokens=2))
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    paced = content_of(_chat_stream(sandbox, max_tokens=2, sandbox_chunk_delay_ms=5000))

    assert paced == plain
    assert slept == [1.0] * (len(_data_events(plain)) - 1)


def test_stall_after_n_chunks_sleeps_then_ends_the_stream_without_done(sandbox, monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    response = _chat_stream(sandbox, sandbox_fault="stall", sandbox_after_chunks=5)

    events = _data_events(content_of(response))
    assert len(events) == 5
    assert slept == [65]


def test_stall_before_any_chunk_is_an_empty_answer_after_the_sleep(sandbox, monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    response = _verify(sandbox, sandbox_fault="stall")
    assert response.status_code == 200
    assert response.content == b""
    assert slept == [65]


def test_a_stream_shorter_than_the_chunk_count_meets_its_fault_after_its_last_chunk(
    sandbox, monkeypatch
):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    whole = content_of(_chat_stream(sandbox, max_tokens=2))
    stalled = _chat_stream(sandbox, max_tokens=2, sandbox_fault="stall", sandbox_after_chunks=99)
    assert content_of(stalled) == whole
    assert slept == [65]


def test_fail_times_counts_mid_stream_faults_too(sandbox, monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    knobs = {"sandbox_fault": "stall", "sandbox_after_chunks": 1, "sandbox_fail_times": 1}
    first = _data_events(content_of(_chat_stream(sandbox, **knobs)))
    second = _data_events(content_of(_chat_stream(sandbox, **knobs)))
    assert len(first) == 1
    assert second[-1] == b"data: [DONE]"


def test_a_mid_stream_reset_without_a_real_socket_falls_back_to_a_502(sandbox):
    response = _chat_stream(sandbox, sandbox_fault="reset", sandbox_after_chunks=2)
    assert response.status_code == 502
    assert "needs a real client socket" in response.json()["error"]["message"]


def test_a_chunk_count_needs_a_reset_or_a_stall(sandbox):
    response = _chat_stream(sandbox, sandbox_fault="500", sandbox_after_chunks=2)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == (
        "sandbox_after_chunks goes with sandbox_fault=reset or sandbox_fault=stall"
    )


def test_a_chunk_count_on_an_answer_that_is_not_streamed_is_refused(sandbox):
    response = _verify(sandbox, sandbox_fault="reset", sandbox_after_chunks="1")
    assert response.status_code == 400
    assert (
        "sandbox_after_chunks needs a streamed answer" in (response.json()["errors"][0]["details"])
    )


def test_stream_knobs_can_be_sent_as_headers(sandbox, monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    headers = {
        "X-Sandbox-Fault": "stall",
        "X-Sandbox-After-Chunks": "2",
        "X-Sandbox-Chunk-Delay-Ms": "10",
    }
    response = sandbox.call(
        "zhipu-glm", "POST", "/api/paas/v4/chat/completions", body=CHAT_STREAM, headers=headers
    )
    assert len(_data_events(content_of(response))) == 2
    assert slept == [0.01, 65]
