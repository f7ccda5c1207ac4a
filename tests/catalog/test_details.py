import json

import pytest

from catalog.apis import EndpointDetailsOutputSerializer
from catalog.models import ProviderApi
from catalog.openapi import PARAMETER_BOUNDS
from catalog.services import endpoints_set_enabled, provider_api_secret_set
from tests.catalog.conftest import assert_matches_documented_shape, import_documents
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db


def details(client, **body):
    return client.post("/v1/details", body, format="json")


def ok(response) -> dict:
    assert response.status_code == 200, response.content
    body = response.json()
    assert_matches_documented_shape(EndpointDetailsOutputSerializer, body)
    return body


def test_details_give_the_api_the_endpoint_and_how_to_call_it(client_for, alice, hunter, settings):
    body = ok(details(client_for(alice.live_key), api="hunter", path="/email-verifier"))
    assert body["success"] is True
    assert body["api"] == {
        "name": "Hunter",
        "slug": "hunter",
        "description": "Find and verify professional email addresses.",
        "baseUrl": "https://api.hunter.example/v2",
        "verified": True,
    }
    endpoint = body["endpoint"]
    assert endpoint["path"] == "/email-verifier"
    assert endpoint["method"] == "GET"
    assert endpoint["description"] == "Verify an email address"
    assert endpoint["price"] == "$0.01"
    assert endpoint["priceDetail"] == "$0.01 per call"
    assert endpoint["isPayable"] is True
    assert endpoint["docsUrl"] == "https://hunter.example/api-documentation"
    assert endpoint["bodyType"] == ""
    assert endpoint["pathParams"] == []
    assert endpoint["queryParams"][0]["name"] == "email"
    assert endpoint["bodyParams"] == []
    assert body["usage"] == {
        "runApi": f"POST {settings.GATEWAY_BASE_URL}/v1/run "
        '{"api": "hunter", "path": "/email-verifier", "query": {"email": "jane@example.com"}}',
        "x402": f"{settings.X402_URL}/hunter/email-verifier",
    }


def test_a_per_result_price_shows_the_unit_price_and_how_it_is_counted(client_for, alice, hunter):
    endpoint = ok(details(client_for(alice.live_key), api="hunter", path="/domain-search"))[
        "endpoint"
    ]
    assert endpoint["price"] == "$0.0025"
    assert endpoint["priceUnit"] == "result"
    assert "data.emails" in endpoint["priceDetail"]
    assert endpoint["paginationParams"] == ["offset"]


def test_a_free_endpoint_costs_zero_dollars(client_for, alice, hunter):
    endpoint = ok(details(client_for(alice.live_key), api="hunter", path="/leads"))["endpoint"]
    assert endpoint["price"] == "$0.00"
    assert endpoint["priceDetail"] == "free"
    assert endpoint["bodyType"] == "object"


def test_a_dynamic_price_is_dynamic_with_token_prices_in_the_detail(client_for, alice):
    import_documents("llm-oas31.yaml")
    body = ok(details(client_for(alice.live_key), api="chat-models-inc", path="/chat/completions"))
    assert body["endpoint"]["price"] == "dynamic"
    assert body["endpoint"]["priceUnit"] == "token"
    assert "$0.60 per million input tokens" in body["endpoint"]["priceDetail"]
    assert '"body": {"model": "glm-4", "messages": [{}]}' in body["usage"]["runApi"]


def test_a_concrete_path_finds_its_template_and_the_run_call_keeps_its_values(
    client_for, alice, hunter
):
    body = ok(details(client_for(alice.live_key), api="hunter", path="/leads/42", method="get"))
    assert body["endpoint"]["path"] == "/leads/{id}"
    assert body["endpoint"]["pathParams"][0]["name"] == "id"
    assert '"path": "/leads/42"' in body["usage"]["runApi"]
    assert body["usage"]["x402"].endswith("/hunter/leads/{id}")


def test_a_start_endpoint_names_its_poll_endpoint(client_for, alice, hunter):
    body = ok(details(client_for(alice.live_key), api="hunter", path="/bulk-enrichments"))
    assert body["endpoint"]["pollEndpoint"] == {
        "method": "GET",
        "path": "/bulk-enrichments/{enrichment_id}",
    }


def test_every_bound_the_importer_keeps_on_a_parameter_is_documented(client_for, alice):
    values = {
        "enum": [5, 10],
        "default": 10,
        "example": 5,
        "format": "int32",
        "pattern": "^[0-9]+$",
        "exclusiveMinimum": True,
        "exclusiveMaximum": False,
    }
    bounded = {"name": "limit", "type": "integer", "required": False, "description": ""}
    bounded |= {bound: values.get(bound, 1) for bound in PARAMETER_BOUNDS}
    make_endpoint(make_provider_api("bounded"), "/rides", query_params=[bounded])
    answer = ok(details(client_for(alice.live_key), api="bounded", path="/rides"))
    assert answer["endpoint"]["queryParams"] == [bounded]


def test_a_path_with_several_methods_asks_for_one(client_for, alice, hunter):
    response = details(client_for(alice.live_key), api="hunter", path="/leads/{id}")
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_REQUEST"
    assert "GET, PUT" in response.json()["error"]
    put = ok(details(client_for(alice.live_key), api="hunter", path="/leads/{id}", method="PUT"))
    assert put["endpoint"]["method"] == "PUT"
    # The run call names the method, or run would ask the same question.
    run_call = json.loads(put["usage"]["runApi"].split(" ", 2)[2])
    assert (run_call["path"], run_call["method"]) == ("/leads/1", "PUT")


@pytest.mark.parametrize(
    ("body", "status", "named"),
    [
        ({"api": "nope", "path": "/email-verifier"}, 404, "nope"),
        ({"api": "hunter", "path": "/nowhere"}, 404, "/nowhere"),
        ({"api": "hunter", "path": "/internal/reindex"}, 404, "/internal/reindex"),
        ({"api": "hunter"}, 400, "path"),
        ({"path": "/email-verifier"}, 400, "api"),
        ({"api": "hunter", "path": "/email-verifier", "method": "FETCH"}, 400, "method"),
        ({"api": ["hunter"], "path": "/email-verifier"}, 400, "api"),
    ],
)
def test_bad_requests_are_refused_in_the_envelope_naming_the_problem(
    client_for, alice, hunter, body, status, named
):
    response = details(client_for(alice.live_key), **body)
    assert response.status_code == status
    assert response.json()["success"] is False
    assert response.json()["code"] == ("NOT_FOUND" if status == 404 else "INVALID_REQUEST")
    assert named in response.json()["error"]


def test_a_disabled_api_has_no_details(client_for, alice, hunter):
    ProviderApi.objects.filter(slug="hunter").update(enabled=False)
    response = details(client_for(alice.live_key), api="hunter", path="/email-verifier")
    assert response.status_code == 404


def test_an_endpoint_disabled_by_the_operator_has_no_details(client_for, alice, hunter):
    api = ProviderApi.objects.get(slug="hunter")
    endpoints_set_enabled(
        endpoint_ids=api.endpoints.filter(path="/email-verifier").values_list("pk", flat=True),
        enabled=False,
    )
    response = details(client_for(alice.live_key), api="hunter", path="/email-verifier")
    assert response.status_code == 404


def test_details_never_show_the_upstream_secret(client_for, alice, hunter):
    provider_api_secret_set(api=ProviderApi.objects.get(slug="hunter"), secret="hunter-key-123")
    response = details(client_for(alice.live_key), api="hunter", path="/email-verifier")
    assert response.status_code == 200
    assert b"hunter-key-123" not in response.content
    assert b"api_key" not in response.content


def test_an_outsider_may_read_details_but_not_without_a_key(client_for, charlie, hunter):
    assert details(client_for(charlie.live_key), api="hunter", path="/leads").status_code == 200
    response = details(client_for(None), api="hunter", path="/leads")
    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHORIZED"
