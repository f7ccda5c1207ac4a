import pytest
from django.test import override_settings

from gateway.parsers import MAX_JSON_DEPTH


def assert_envelope(response, status: int, code: str) -> dict:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["success"] is False
    assert body["code"] == code
    assert isinstance(body["error"], str) and body["error"]
    return body


@pytest.mark.parametrize("path", ["/v1/nope", "/v1/credits/nope/deeper", "/v1", "/v1/"])
def test_an_unknown_route_is_a_404_envelope_not_a_page(client_for, alice, path):
    body = assert_envelope(client_for(alice.live_key).get(path), 404, "NOT_FOUND")
    assert path.rstrip("/") in body["error"] or path == "/v1/"


def test_an_unknown_route_is_a_404_even_without_a_key(client):
    assert_envelope(
        client.post("/v1/nope", data="{}", content_type="application/json"), 404, "NOT_FOUND"
    )


def test_a_wrong_method_is_a_405_envelope(client_for, alice):
    response = client_for(alice.live_key).post("/v1/whoami", {}, format="json")
    body = assert_envelope(response, 405, "METHOD_NOT_ALLOWED")
    assert "POST" in body["error"]
    assert "GET" in response["Allow"]


@override_settings(MAX_REQUEST_BODY_BYTES=1000, DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_an_oversize_body_is_a_413_envelope(client_for, alice):
    response = client_for(alice.live_key).post(
        "/v1/whoami", data='{"x": "' + "a" * 2000 + '"}', content_type="application/json"
    )
    body = assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")
    assert "1000 bytes" in body["error"]


def test_an_unexpected_exception_is_a_500_envelope_without_internals(
    client_for, alice, monkeypatch, caplog
):
    def explode(**kwargs):
        raise RuntimeError("database password is hunter2")

    monkeypatch.setattr("gateway.auth.api_key_authenticate", explode)
    response = client_for(alice.live_key).get("/v1/whoami")
    body = assert_envelope(response, 500, "INTERNAL_ERROR")
    assert "hunter2" not in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert body["error"] == "Internal error; the failure was logged"
    assert "hunter2" in caplog.text


def test_an_html_accept_header_still_gets_json(client_for, alice):
    response = client_for(alice.live_key).get("/v1/nope", HTTP_ACCEPT="text/html")
    assert_envelope(response, 404, "NOT_FOUND")


def test_malformed_json_is_a_400_envelope(client_for, alice):
    response = client_for(alice.live_key).post(
        "/v1/credits/check", data='{"amountCents": 1,', content_type="application/json"
    )
    body = assert_envelope(response, 400, "INVALID_REQUEST")
    assert "Malformed JSON" in body["error"]


def nested(levels: int) -> str:
    return (
        '{"api": "leads", "path": "/v1/people/enrich", "body": ' + "[" * levels + "]" * levels + "}"
    )


@pytest.mark.parametrize("path", ["/v1/run", "/v1/search", "/v1/credits/check"])
@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH, 100_000])
def test_a_body_nested_too_deeply_is_a_400_envelope(client_for, alice, path, levels):
    response = client_for(alice.live_key).post(
        path, data=nested(levels), content_type="application/json"
    )
    body = assert_envelope(response, 400, "INVALID_REQUEST")
    assert f"deeper than {MAX_JSON_DEPTH} levels" in body["error"]


def test_a_body_nested_to_the_limit_is_read(client_for, alice):
    # The run request's own object is one level: the body inside it may nest one less. It is
    # read and validated, and the call goes on to routing (no API "leads" here).
    response = client_for(alice.live_key).post(
        "/v1/run", data=nested(MAX_JSON_DEPTH - 1), content_type="application/json"
    )
    body = assert_envelope(response, 404, "NOT_FOUND")
    assert "leads" in body["error"]


def test_a_wrong_content_type_is_a_400_envelope_naming_json(client_for, alice):
    response = client_for(alice.live_key).post(
        "/v1/credits/check", data="amountCents=1", content_type="text/plain"
    )
    body = assert_envelope(response, 400, "INVALID_REQUEST")
    assert "text/plain" in body["error"] and "application/json" in body["error"]


JSON_BODY_ROUTES = ["/v1/run", "/v1/search", "/v1/details", "/v1/integrate", "/v1/credits/check"]


@pytest.mark.parametrize("path", JSON_BODY_ROUTES)
def test_a_json_body_that_is_not_an_object_is_a_400_envelope(client_for, alice, path):
    response = client_for(alice.live_key).post(path, data="[1, 2]", content_type="application/json")
    body = assert_envelope(response, 400, "INVALID_REQUEST")
    assert body["error"] == "The request body must be a JSON object, not list."


@pytest.mark.parametrize("path", JSON_BODY_ROUTES)
def test_a_field_the_route_does_not_take_is_a_400_naming_it(client_for, alice, path):
    response = client_for(alice.live_key).post(path, {"limt": 5, "params": {}}, format="json")
    body = assert_envelope(response, 400, "INVALID_REQUEST")
    assert "limt: unknown field" in body["error"] and "params: unknown field" in body["error"]
