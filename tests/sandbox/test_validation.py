"""Inputs are checked like a provider checks them, and errors come in the provider's shape."""

import pytest


def test_a_missing_required_query_parameter_is_a_400_in_hunters_shape(sandbox):
    response = sandbox.call("hunter", "GET", "/v2/email-verifier")
    assert response.status_code == 400
    assert response.json() == {
        "errors": [{"id": "missing_parameter", "code": 400, "details": "email is required"}]
    }


def test_a_missing_required_body_property_is_a_400_in_pdls_shape(sandbox):
    response = sandbox.call("peopledatalabs", "POST", "/v5/person/bulk", body={})
    assert response.status_code == 400
    assert response.json() == {
        "status": 400,
        "error": {"type": "missing_parameter", "message": "requests is required"},
    }


def test_a_missing_parameter_is_named_in_xs_problem_document(sandbox):
    body = sandbox.call("x-twitter", "GET", "/2/tweets/search/recent").json()
    assert body["errors"][0]["parameters"] == {"query": []}
    assert body["title"] == "Invalid Request"


def test_an_api_without_its_own_style_uses_the_generic_error_shape(sandbox):
    response = sandbox.call("kickbox", "GET", "/v2/verify")
    assert response.json() == {
        "error": {"code": "missing_parameter", "message": "email is required"}
    }


def test_a_required_property_of_an_array_item_is_checked(sandbox):
    response = sandbox.call(
        "zhipu-glm",
        "POST",
        "/api/paas/v4/chat/completions",
        body={"model": "glm-4.5", "messages": [{"content": "hi"}]},
    )
    assert response.status_code == 400
    assert response.json()["error"] == {"code": "1214", "message": "messages[0].role is required"}


def test_a_batch_over_max_items_is_refused_with_the_limit(sandbox):
    profiles = [f"https://www.linkedin.com/in/p{n}" for n in range(2001)]
    response = sandbox.call(
        "contactout", "POST", "/v2/people/linkedin/batch", body={"profiles": profiles}
    )
    assert response.status_code == 400
    assert "at most 2000 items (got 2001)" in response.json()["error"]["message"]


def test_a_batch_at_its_limit_is_accepted(sandbox):
    requests = [{"params": {"email": f"p{n}@acme.io"}} for n in range(100)]
    response = sandbox.call(
        "peopledatalabs", "POST", "/v5/person/bulk", body={"requests": requests}
    )
    assert response.status_code == 200
    assert len(response.json()) == 100


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("101", "limit must be at most 100 (got 101)"),
        ("0", "limit must be at least 1 (got 0)"),
        ("ten", "limit must be an integer (got 'ten')"),
    ],
)
def test_an_integer_parameter_out_of_bounds_is_refused(sandbox, value, message):
    response = sandbox.call(
        "hunter", "GET", "/v2/domain-search", query={"domain": "a.io", "limit": value}
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["details"] == message


def test_a_value_outside_an_enum_is_refused(sandbox):
    response = sandbox.call(
        "peopledatalabs", "GET", "/v5/autocomplete", query={"field": "favourite_colour"}
    )
    assert response.status_code == 400
    assert "field must be one of" in response.json()["error"]["message"]


@pytest.mark.parametrize("raw", [b"{nope", b"[" * 100_000 + b"]" * 100_000])
def test_a_body_that_is_not_json_is_refused(sandbox, raw):
    response = sandbox.client.generic(
        "POST", "/sandbox/firecrawl/v1/scrape", raw, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {"success": False, "error": "The request body is not valid JSON"}


def test_a_body_that_is_not_an_object_is_refused(sandbox):
    response = sandbox.call("serper", "POST", "/search", body=["q"])
    assert response.status_code == 400
