"""x-gateway-requirements: rules that span parameters, imported, shown in details and integrate,
and filled in by the example calls."""

import json

import pytest

from catalog.apis import EndpointDetailsOutputSerializer
from catalog.models import Endpoint, ProviderApi
from catalog.requirements import (
    RequirementError,
    requirement_text,
    requirements_fill,
    requirements_parse,
    requirements_problems,
)
from catalog.services import openapi_import
from tests.catalog.conftest import ONE_CENT, assert_matches_documented_shape

FINDER = """
openapi: 3.0.3
info: {title: Finder}
servers: [{url: "https://api.finder.test"}]
x-gateway-api: {slug: finder}
paths:
  /email-finder:
    get:
      parameters:
        - {name: domain, in: query, schema: {type: string}}
        - {name: company, in: query, schema: {type: string}}
        - {name: first_name, in: query, schema: {type: string}}
        - {name: last_name, in: query, schema: {type: string}}
        - {name: full_name, in: query, schema: {type: string}}
      x-gateway-requirements:
        - anyOf: [domain, company]
        - anyOf: [[first_name, last_name], full_name]
      x-gateway-price: "0.01"
  /match:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                email: {type: string}
                reveal_phone: {type: boolean}
                webhook_url: {type: string, format: uri}
                latitude: {type: number}
                longitude: {type: number}
      x-gateway-requirements:
        - {if: reveal_phone, then: [webhook_url]}
        - allOrNone: [latitude, longitude]
        - oneOf: [email, [latitude, longitude]]
      x-gateway-price: "0.02"
"""


@pytest.fixture
def finder(db, tmp_path):
    document = tmp_path / "finder.yaml"
    document.write_text(FINDER)
    summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
    assert not summary.errors, summary.errors
    return ProviderApi.objects.get(slug="finder")


def _import_error(tmp_path, requirements: str) -> str:
    document = tmp_path / "bad.yaml"
    document.write_text(
        "openapi: 3.0.0\ninfo: {title: Bad}\npaths:\n  /x:\n    get:\n"
        "      parameters: [{name: a, in: query}, {name: b, in: query}]\n"
        f"      x-gateway-requirements: {requirements}\n"
    )
    summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
    assert summary.documents == []
    [(_, message)] = summary.errors
    return message


def test_the_importer_stores_each_rule_with_alternatives_as_lists_of_names(finder):
    finder_endpoint = Endpoint.objects.get(api=finder, path="/email-finder")
    match = Endpoint.objects.get(api=finder, path="/match")
    assert finder_endpoint.requirements == [
        {"anyOf": [["domain"], ["company"]]},
        {"anyOf": [["first_name", "last_name"], ["full_name"]]},
    ]
    assert match.requirements == [
        {"if": "reveal_phone", "then": ["webhook_url"]},
        {"allOrNone": ["latitude", "longitude"]},
        {"oneOf": [["email"], ["latitude", "longitude"]]},
    ]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("requirements", "named"),
    [
        ("[{anyOf: [a, c]}]", "names c, which is not a parameter"),
        ("[{anyOf: [a]}]", "at least two alternatives"),
        ("[{anyOf: [a, b], oneOf: [a, b]}]", "exactly one of"),
        ("[{if: a}]", "if needs then"),
        ("[{if: [a, b], then: [a]}]", "if names one parameter"),
        ("[{allOrNone: a}]", "at least two names"),
        ("{anyOf: [a, b]}", "must be a list"),
    ],
)
def test_a_wrong_rule_fails_the_document_naming_the_operation(tmp_path, requirements, named):
    message = _import_error(tmp_path, requirements)
    assert "GET /x: x-gateway-requirements" in message
    assert named in message


def test_details_show_each_rule_with_its_description(client_for, alice, finder):
    response = client_for(alice.live_key).post(
        "/v1/details", {"api": "finder", "path": "/email-finder"}, format="json"
    )
    body = response.json()
    assert_matches_documented_shape(EndpointDetailsOutputSerializer, body)
    assert body["endpoint"]["requirements"] == [
        {"anyOf": [["domain"], ["company"]], "description": "Send domain or company."},
        {
            "anyOf": [["first_name", "last_name"], ["full_name"]],
            "description": "Send first_name and last_name, or full_name.",
        },
    ]


def test_an_endpoint_without_rules_shows_an_empty_list(client_for, alice, finder):
    Endpoint.objects.filter(api=finder, path="/email-finder").update(requirements=[])
    response = client_for(alice.live_key).post(
        "/v1/details", {"api": "finder", "path": "/email-finder"}, format="json"
    )
    assert response.json()["endpoint"]["requirements"] == []


def test_the_example_run_call_fills_a_set_that_meets_every_rule(client_for, alice, finder):
    response = client_for(alice.live_key).post(
        "/v1/details", {"api": "finder", "path": "/email-finder"}, format="json"
    )
    run_api = response.json()["usage"]["runApi"]
    payload = json.loads(run_api.split(" ", 2)[2])
    assert payload["query"] == {
        "domain": "example.com",
        "first_name": "Jane",
        "last_name": "Doe",
    }


def test_every_snippet_sends_the_filled_set(client_for, alice, finder):
    response = client_for(alice.live_key).post(
        "/v1/integrate", {"api": "finder", "path": "/email-finder", "format": "all"}, format="json"
    )
    for code in response.json()["snippets"].values():
        assert "example.com" in code and "Jane" in code and "Doe" in code


def test_a_flag_left_out_of_the_example_needs_nothing_more(client_for, alice, finder):
    response = client_for(alice.live_key).post(
        "/v1/details", {"api": "finder", "path": "/match"}, format="json"
    )
    payload = json.loads(response.json()["usage"]["runApi"].split(" ", 2)[2])
    assert payload["body"] == {"email": "jane@example.com"}


# --- The rules themselves -------------------------------------------------------------------------


def test_each_kind_reads_as_a_sentence():
    assert requirement_text({"anyOf": [["a"], ["b"], ["c"]]}) == "Send a, b or c."
    assert requirement_text({"oneOf": [["url"], ["html"]]}) == "Send exactly one of url or html."
    assert (
        requirement_text({"allOrNone": ["lat", "lng"]})
        == "Send lat and lng together, or none of them."
    )
    assert requirement_text({"if": "cursor", "then": ["q"]}) == "With cursor, send q too."


def test_problems_name_what_is_missing_with_the_callers_labels():
    rules = requirements_parse(
        [{"anyOf": ["a", ["b", "c"]]}, {"allOrNone": ["x", "y"]}, {"oneOf": ["p", "q"]}],
        declared=["a", "b", "c", "x", "y", "p", "q"],
    )
    problems = requirements_problems(rules, {"b", "x", "p", "q"}, lambda name: f"query.{name}")
    assert problems == [
        "query.a, or query.b and query.c",
        "query.y (with query.x and query.y, which go together)",
        "only one of query.p or query.q",
    ]
    assert requirements_problems(rules, {"a", "p"}) == []


def test_fill_takes_the_first_alternative_and_what_sent_names_bring():
    rules = [
        {"anyOf": [["domain"], ["company"]]},
        {"if": "reveal", "then": ["webhook"]},
        {"allOrNone": ["webhook", "secret"]},
    ]
    assert requirements_fill(rules, set()) == {"domain"}
    assert requirements_fill(rules, {"company", "reveal"}) == {
        "company",
        "reveal",
        "webhook",
        "secret",
    }


def test_a_rule_naming_a_parameter_twice_is_refused():
    with pytest.raises(RequirementError, match="twice"):
        requirements_parse([{"anyOf": [["a", "a"], "b"]}], declared=["a", "b"])


def test_the_admin_form_refuses_a_rule_naming_an_unknown_parameter(finder):
    from catalog.forms import EndpointAdminForm

    endpoint = Endpoint.objects.get(api=finder, path="/email-finder")
    form = EndpointAdminForm(instance=endpoint)
    data = {name: form.initial.get(name) for name in form.fields}
    data = {
        **{k: v for k, v in data.items() if v is not None},
        "path_params": "[]",
        "query_params": json.dumps(endpoint.query_params),
        "body_params": "[]",
        "pagination_params": "[]",
        "requirements": json.dumps([{"anyOf": ["domain", "website"]}]),
    }
    bound = EndpointAdminForm(data=data, instance=endpoint)
    assert not bound.is_valid()
    assert "website, which is not a parameter" in str(bound.errors["requirements"])
