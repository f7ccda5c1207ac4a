import time

import pytest

from calls.upstream import (
    UpstreamAuth,
    UpstreamFailure,
    UpstreamRequest,
    build_url,
    upstream_call,
)
from gateway.errors import InvalidRequest
from tests.http_double import HttpDouble, Reply, closed_port


@pytest.fixture
def provider():
    with HttpDouble() as double:
        yield double


def call(url, method="GET", **kwargs):
    kwargs.setdefault("allow_private_network", True)
    kwargs.setdefault("timeout_seconds", 5)
    return upstream_call(UpstreamRequest(method=method, url=url, **kwargs))


def failing_then_ok(failures: int, status: int = 503, headers=None):
    state = {"calls": 0}

    def route(seen):
        state["calls"] += 1
        if state["calls"] <= failures:
            return Reply(status, {"error": "busy"}, headers=headers or {})
        return Reply(200, {"ok": True})

    return route


def test_an_idempotent_call_is_retried_twice_on_a_503(provider):
    provider.routes["/flaky"] = failing_then_ok(2)
    response = call(provider.url + "/flaky")
    assert response.status == 200
    assert len(provider.calls("/flaky")) == 3


def test_a_third_failure_is_returned_not_retried_again(provider):
    provider.routes["/flaky"] = failing_then_ok(5, status=502)
    assert call(provider.url + "/flaky").status == 502
    assert len(provider.calls("/flaky")) == 3


def test_a_post_is_never_retried_on_a_status(provider):
    provider.routes["/create"] = failing_then_ok(1, status=503)
    response = call(provider.url + "/create", method="POST", body={"a": 1}, has_body=True)
    assert response.status == 503
    assert len(provider.calls("/create")) == 1


def test_a_500_is_not_retried(provider):
    provider.routes["/broken"] = failing_then_ok(1, status=500)
    assert call(provider.url + "/broken").status == 500
    assert len(provider.calls("/broken")) == 1


def test_retry_after_is_honoured(provider):
    provider.routes["/limited"] = failing_then_ok(1, status=429, headers={"Retry-After": "1"})
    started = time.monotonic()
    assert call(provider.url + "/limited").status == 200
    assert time.monotonic() - started >= 1
    assert len(provider.calls("/limited")) == 2


def test_a_retry_after_beyond_the_deadline_is_not_waited_for(provider):
    provider.routes["/limited"] = failing_then_ok(1, status=429, headers={"Retry-After": "30"})
    started = time.monotonic()
    assert call(provider.url + "/limited", timeout_seconds=3).status == 429
    assert time.monotonic() - started < 2
    assert len(provider.calls("/limited")) == 1


def test_a_refused_connection_is_a_failure_saying_so():
    with pytest.raises(UpstreamFailure, match="connection refused"):
        call(f"http://127.0.0.1:{closed_port()}/x", method="POST", has_body=True, body={})


def test_a_reset_connection_is_a_failure_and_is_not_retried(provider):
    provider.routes["/reset"] = Reply(reset=True)
    with pytest.raises(UpstreamFailure, match=r"reset|aborted|closed") as failure:
        call(provider.url + "/reset")
    assert failure.value.timeout is False
    assert len(provider.calls("/reset")) == 1


def test_a_slow_provider_times_out(provider):
    provider.routes["/slow"] = Reply(200, {"late": True}, delay=2)
    with pytest.raises(UpstreamFailure, match="within 1 seconds") as failure:
        call(provider.url + "/slow", timeout_seconds=1)
    assert failure.value.timeout is True


def test_an_oversized_answer_is_refused(provider, settings):
    settings.UPSTREAM_MAX_RESPONSE_BYTES = 1000
    provider.routes["/big"] = Reply(200, b"x" * 5000)
    with pytest.raises(UpstreamFailure, match="exceeds the limit of 1000 bytes"):
        call(provider.url + "/big")


def test_redirects_are_not_followed(provider):
    provider.routes["/moved"] = Reply(302, b"", headers={"Location": "http://169.254.169.254/"})
    with pytest.raises(UpstreamFailure, match="redirects are not followed"):
        call(provider.url + "/moved")
    assert len(provider.seen) == 1


@pytest.mark.parametrize(
    ("auth", "where"),
    [
        (UpstreamAuth("bearer", "", "s3cret"), ("header", "Authorization", "Bearer s3cret")),
        (UpstreamAuth("header", "X-Api-Key", "s3cret"), ("header", "X-Api-Key", "s3cret")),
        (UpstreamAuth("query", "api_key", "s3cret"), ("query", "api_key", ["s3cret"])),
    ],
)
def test_the_providers_credential_is_added_as_the_catalog_says(provider, auth, where):
    provider.routes["/me"] = Reply(200, {"ok": True})
    call(provider.url + "/me", auth=auth, query={"q": "x"})
    seen = provider.calls("/me")[0]
    kind, name, value = where
    assert (seen.headers if kind == "header" else seen.query)[name] == value
    assert seen.query["q"] == ["x"]


def test_the_provider_sees_the_gateway_as_the_client_and_may_compress(provider):
    provider.routes["/who"] = Reply(200, {"ok": True})
    call(provider.url + "/who", query={"tag": ["a", "b"], "n": 2, "exact": True})
    seen = provider.calls("/who")[0]
    assert seen.headers["User-Agent"] == "api-gateway/1.0"
    assert "gzip" in seen.headers["Accept-Encoding"]
    assert seen.query == {"tag": ["a", "b"], "n": ["2"], "exact": ["True"]}


def test_provider_cookies_are_never_sent_to_anyone(provider):
    provider.routes["/cookie"] = Reply(200, {"ok": 1}, headers={"Set-Cookie": "sid=abc; Path=/"})
    call(provider.url + "/cookie")
    call(provider.url + "/cookie")
    assert all("Cookie" not in seen.headers for seen in provider.calls("/cookie"))


def test_a_private_address_is_refused_unless_allowed(provider):
    provider.routes["/x"] = Reply(200, {"ok": True})
    with pytest.raises(UpstreamFailure, match=r"non-public address 127\.0\.0\.1"):
        call(provider.url + "/x", allow_private_network=False)
    assert provider.seen == []


def test_the_url_stays_on_the_providers_origin_and_base_path():
    assert build_url("https://api.example.com/v2", "/jobs/1") == "https://api.example.com/v2/jobs/1"
    with pytest.raises(InvalidRequest):
        build_url("https://api.example.com", "@evil.com/x")


@pytest.mark.parametrize(
    ("encoding", "content_type", "sent"),
    [
        ("json", "application/json", b'{"q": "a b", "n": 2}'),
        ("form", "application/x-www-form-urlencoded", b"q=a+b&n=2"),
    ],
)
def test_the_body_is_encoded_as_the_provider_takes_it(provider, encoding, content_type, sent):
    provider.routes["/in"] = Reply(200, {"ok": True})
    call(
        provider.url + "/in",
        method="POST",
        body={"q": "a b", "n": 2},
        has_body=True,
        body_encoding=encoding,
    )
    seen = provider.calls("/in")[0]
    assert seen.headers["Content-Type"] == content_type
    assert seen.body == sent


def test_a_multipart_body_sends_each_field_as_a_part(provider):
    provider.routes["/upload"] = Reply(200, {"ok": True})
    call(
        provider.url + "/upload",
        method="POST",
        body={"name": "a", "tags": ["x"]},
        has_body=True,
        body_encoding="multipart",
    )
    seen = provider.calls("/upload")[0]
    assert seen.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    assert b'name="name"\r\n\r\na\r\n' in seen.body
    assert b'name="tags"\r\n\r\n["x"]\r\n' in seen.body
