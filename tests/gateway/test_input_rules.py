"""What the API takes as input: ASCII digits only, each query parameter once, bodies with a
length, URLs of bounded length, and an OpenAPI document that states each of these rules."""

import re
import socket
from urllib.parse import urlsplit

import pytest
import responses

from catalog.paths import caller_path_check
from gateway.errors import InvalidRequest
from gateway.middleware import MAX_URL_CHARS
from tests.calls.conftest import PROVIDER_URL, leads
from tests.factories import fund

__all__ = ["leads"]

NON_ASCII_NUMBERS = ["\u0661\u0660", "1_000", "\uff11\uff10", " 10", "10 ", "+10", "1e3"]


@pytest.fixture
def api(client_for, alice):
    return client_for(alice.live_key)


@pytest.mark.parametrize("amount", [*NON_ASCII_NUMBERS, "10.", ".5", "NaN"])
def test_an_amount_in_other_digits_is_refused(api, amount):
    response = api.post("/v1/credits/check", {"amountCents": amount}, format="json")
    assert response.status_code == 400, amount
    assert response.json()["code"] == "INVALID_REQUEST"
    assert "amountCents" in response.json()["error"]


@pytest.mark.parametrize("amount", ["10", "10.25", 10, 10.25, "0.0001"])
def test_an_amount_in_ascii_digits_or_a_json_number_is_read(api, amount):
    response = api.post("/v1/credits/check", {"amountCents": amount}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["requiredCents"] == float(amount)


@pytest.mark.parametrize(
    "path", ["/v1/credits/usage", "/v1/credits/transactions", "/v1/list-endpoints"]
)
@pytest.mark.parametrize("name", ["limit", "offset"])
@pytest.mark.parametrize("number", NON_ASCII_NUMBERS)
def test_a_query_integer_in_other_digits_is_refused(api, path, name, number):
    response = api.get(path, {name: number})
    assert response.status_code == 400, (path, name, number)
    assert name in response.json()["error"]


def test_days_takes_ascii_digits_only(api):
    assert api.get("/v1/credits/usage", {"days": "\u0667"}).status_code == 400
    assert api.get("/v1/credits/usage", {"days": "7"}).status_code == 200


def test_a_query_parameter_given_twice_is_refused(api):
    response = api.get("/v1/credits/usage?limit=1&limit=200")
    assert response.status_code == 400
    assert response.json()["error"] == (
        "Query parameters given more than once: limit; give each once"
    )
    assert api.get("/v1/credits/usage?limit=1&offset=0").status_code == 200


@responses.activate
@pytest.mark.parametrize("limit", ["1_000", "\u0661\u0660", " 5"])
def test_a_result_bound_in_other_digits_is_refused_before_the_provider_is_called(
    api, alice, leads, limit
):
    fund(alice.user, 1_000_000)
    response = api.post(
        "/v1/run",
        {"api": "leads", "path": "/v2/domain-search", "query": {"domain": "a.co", "limit": limit}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"] == "query.limit must be a positive integer"
    assert not responses.calls


@responses.activate
def test_a_result_bound_in_ascii_digits_is_quoted(api, alice, leads):
    fund(alice.user, 1_000_000)
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": [{"v": 1}]}})
    response = api.post(
        "/v1/run",
        {"api": "leads", "path": "/v2/domain-search", "query": {"domain": "a.co", "limit": "5"}},
        format="json",
    )
    assert response.status_code == 200


def test_a_chunked_body_is_refused_with_411_in_the_envelope(api):
    response = api.generic(
        "POST",
        "/v1/credits/check",
        b'{"amountCents": 10}',
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
        CONTENT_LENGTH="",
    )
    assert response.status_code == 411
    assert response.json()["code"] == "LENGTH_REQUIRED"
    assert response.json()["success"] is False


@pytest.mark.django_db(transaction=True)
def test_a_chunked_body_sent_over_a_socket_is_refused_not_read_as_empty(live_server, alice):
    address = urlsplit(live_server.url)
    body = b'{"amountCents": 10}'
    request = (
        b"POST /v1/credits/check HTTP/1.1\r\n"
        + f"Host: {address.netloc}\r\n".encode()
        + f"Authorization: Bearer {alice.live_key}\r\n".encode()
        + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
        + b"Connection: close\r\n\r\n"
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\n"
    )
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, content = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 411"), head
    assert b'"code":"LENGTH_REQUIRED"' in content


def test_a_url_past_the_limit_is_a_414_in_the_envelope(api):
    response = api.get("/v1/credits/usage?x=" + "a" * MAX_URL_CHARS)
    assert response.status_code == 414
    assert response.json()["code"] == "URI_TOO_LONG"
    assert api.get("/v1/credits/usage?limit=5").status_code == 200


# --- The OpenAPI document ----------------------------------------------------------------------


@pytest.fixture
def openapi(client, db):
    return client.get("/v1/openapi.json").json()


def request_schema(openapi, path):
    content = openapi["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    return openapi["components"]["schemas"][content["schema"]["$ref"].rsplit("/", 1)[-1]]


def test_the_document_says_a_string_may_not_be_blank_after_trimming(openapi, api):
    api_field = request_schema(openapi, "/v1/run")["properties"]["api"]
    assert not re.search(api_field["pattern"], "   \t\x1f\x85")
    assert re.search(api_field["pattern"], " hunter ")
    prompt = request_schema(openapi, "/v1/search")["properties"]["prompt"]
    assert prompt["pattern"] == api_field["pattern"]
    assert api.post("/v1/search", {"prompt": " \x1f "}, format="json").status_code == 400


PATHS = [
    "/v2/domain-search",
    "/v1/jobs/{id}",
    "/emails/jane@example.com",
    "/repos/o/r/compare/main...dev",
    "/a/.hidden/..b",
    "/q?x=1",
    "/v1/a%20b",
    "v1/missing-slash",
    "",
    "/a//b",
    "/a/../b",
    "/.",
    "/a/..%2Fadmin",
    "/%2e%2e/x",
    "/a\\b",
    "/a\nb",
    "/a\n",
    "/a%0a",
    "/a\x7f",
]


@pytest.mark.parametrize("operation", ["/v1/run", "/v1/details", "/v1/integrate"])
def test_the_document_states_the_path_rules_the_server_applies(openapi, operation):
    pattern = request_schema(openapi, operation)["properties"]["path"]["pattern"]
    for path in PATHS:
        try:
            caller_path_check(path)
            accepted = True
        except InvalidRequest:
            accepted = False
        assert bool(re.search(pattern, path)) == accepted, path


def test_the_document_states_the_decimals_and_the_statuses_of_the_server(openapi):
    amount = request_schema(openapi, "/v1/credits/check")["properties"]["amountCents"]
    assert amount["multipleOf"] == 0.0001
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            if path.startswith("/v1/") and method in ("get", "post"):
                assert {"411", "414"} <= set(operation["responses"]), (path, method)
    assert (
        str(MAX_URL_CHARS)
        in openapi["paths"]["/v1/whoami"]["get"]["responses"]["414"]["description"]
    )
