"""The sandbox answers at /sandbox/<slug>/<provider path> without a key or a database (these
tests have no database access, so any query would fail them)."""

from sandbox.spec import catalog


def test_the_ping_answers_ok(sandbox):
    response = sandbox.client.get("/sandbox/_ping")
    assert response.status_code == 200
    assert response.json() == {"ok": True}


def test_an_unknown_api_is_a_json_404(sandbox):
    response = sandbox.call("no-such-api", "GET", "/v1/anything")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "unknown_api"


def test_an_unknown_path_under_a_known_api_is_a_404_in_the_provider_style(sandbox):
    response = sandbox.call("hunter", "GET", "/v2/no-such-thing")
    assert response.status_code == 404
    assert response.json()["errors"][0]["code"] == 404


def test_a_known_path_with_another_method_is_a_405_naming_the_allowed_ones(sandbox):
    response = sandbox.call("hunter", "POST", "/v2/domain-search", body={})
    assert response.status_code == 405
    assert response["Allow"] == "GET"


def test_a_literal_path_wins_over_a_template(sandbox):
    response = sandbox.call(
        "thecompaniesapi", "GET", "/v2/companies/by-email", query={"email": "ann@acme.io"}
    )
    assert response.status_code == 200
    assert response.json()["email"]["domain"] == "acme.io"


def test_a_root_path_and_a_trailing_slash_path_are_both_routed(sandbox):
    assert sandbox.call("jina-reader", "POST", "/", body={"url": "https://a.io"}).status_code == 200
    response = sandbox.call("millionverifier", "GET", "/api/v3/", query={"email": "a@b.io"})
    assert response.status_code == 200
    assert response.json()["email"] == "a@b.io"


def test_path_parameters_reach_the_answer(sandbox):
    response = sandbox.call("x-twitter", "GET", "/2/users/by/username/XDevelopers")
    assert response.json()["data"]["username"] == "XDevelopers"


def test_the_gateways_bearer_key_is_neither_needed_nor_checked(sandbox):
    response = sandbox.call(
        "hunter",
        "GET",
        "/v2/email-verifier",
        query={"email": "a@b.io", "api_key": "anything"},
        headers={"Authorization": "Bearer nonsense"},
    )
    assert response.status_code == 200


def test_the_route_table_puts_literal_templates_first():
    routes = [pattern.pattern for pattern, _ in catalog()["thecompaniesapi"].routes]
    assert routes.index(r"^/v2/companies/by\-email$") < routes.index(
        r"^/v2/companies/(?P<domain>[^/]+)$"
    )
