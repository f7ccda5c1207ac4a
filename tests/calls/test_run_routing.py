"""POST /v1/run: which provider URL and method a call goes to, and what it refuses before any
charge."""

import json
import re

import pytest
import responses

from catalog.snippets import run_request
from credits.models import Hold, UsageEvent
from tests.calls.conftest import PROVIDER_URL, param
from tests.factories import fund, make_endpoint


@pytest.fixture
def funded(alice):
    return fund(alice.user, 10_000_000)


@responses.activate
def test_the_method_comes_from_the_catalog_and_query_goes_to_the_query_string(
    run, alice, leads, funded
):
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": []}})

    response = run(
        alice.live_key,
        api="leads",
        path="/v2/domain-search",
        query={"domain": "stripe.com", "limit": 5},
    )

    assert response.status_code == 200, response.json()
    sent = responses.calls[0].request
    assert sent.method == "GET"
    assert "domain=stripe.com" in sent.url and "limit=5" in sent.url
    assert sent.body is None


@responses.activate
def test_optional_fields_sent_as_null_are_absent(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": []}})

    response = run(
        alice.live_key,
        api="leads",
        path="/v2/domain-search",
        query={"domain": "stripe.com"},
        body=None,
        pathParams=None,
        parentRequestId=None,
        method=None,
    )

    assert response.status_code == 200, response.json()
    sent = responses.calls[0].request
    assert sent.method == "GET" and sent.body is None
    assert "domain=stripe.com" in sent.url

    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": {"name": "Ada"}})
    response = run(
        alice.live_key,
        api="leads",
        path="/v1/people/enrich",
        body={"email": "ada@example.com"},
        query=None,
    )
    assert response.status_code == 200, response.json()
    assert responses.calls[1].request.url == f"{PROVIDER_URL}/v1/people/enrich"


@responses.activate
def test_the_body_is_sent_as_json_to_a_post_endpoint(run, alice, leads, funded):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": {"name": "Ada"}})

    response = run(
        alice.live_key,
        api="leads",
        path="/v1/people/enrich",
        body={"email": "ada@example.com", "company": "Analytical"},
    )

    assert response.status_code == 200
    sent = responses.calls[0].request
    assert sent.method == "POST"
    assert json.loads(sent.body) == {"email": "ada@example.com", "company": "Analytical"}
    assert sent.headers["Content-Type"] == "application/json"


@responses.activate
def test_the_providers_credential_is_added_and_the_callers_key_is_not_forwarded(
    run, alice, leads, funded
):
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={})
    run(alice.live_key, api="leads", path="/v1/people/enrich", body={"email": "a@b.c"})
    sent = responses.calls[0].request
    assert sent.headers["X-Api-Key"] == "provider-secret"
    assert "Authorization" not in sent.headers
    assert alice.live_key not in str(sent.headers)
    assert "Cookie" not in sent.headers


@responses.activate
def test_a_concrete_path_fills_the_templates_placeholders(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/job%20one", json={"status": "done"})
    assert run(alice.live_key, api="leads", path="/v1/jobs/job one").status_code == 200


@responses.activate
def test_a_percent_encoded_concrete_path_is_not_encoded_twice(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/job%20one", json={"status": "done"})
    assert run(alice.live_key, api="leads", path="/v1/jobs/job%20one").status_code == 200
    assert responses.calls[0].request.url == f"{PROVIDER_URL}/v1/jobs/job%20one"


@pytest.fixture
def queues(leads):
    """Google-style resource names: a placeholder that spans several segments."""
    name = {
        **param("name", True),
        "multiSegment": True,
        "description": "The queue, as `projects/{project}/queues/{queue}`.",
    }
    for path, method in [("/v2/{name}", "GET"), ("/v2/{name}:pause", "POST")]:
        make_endpoint(leads.api, path, method, path_params=[name], body_type="object")
    return leads


@responses.activate
def test_a_multi_segment_placeholder_takes_a_resource_name_with_its_slashes(
    run, alice, queues, funded
):
    responses.post(f"{PROVIDER_URL}/v2/projects/p1/queues/q%201:pause", json={"state": "PAUSED"})
    responses.get(f"{PROVIDER_URL}/v2/projects/p1/queues/q1", json={"state": "RUNNING"})

    paused = run(alice.live_key, api="leads", path="/v2/projects/p1/queues/q 1:pause", body={})
    got = run(
        alice.live_key, api="leads", path="/v2/{name}", pathParams={"name": "projects/p1/queues/q1"}
    )

    assert paused.status_code == 200, paused.json()
    assert got.status_code == 200, got.json()
    assert [call.request.method for call in responses.calls] == ["POST", "GET"]


@responses.activate
def test_the_example_call_of_a_multi_segment_endpoint_reaches_the_resource_it_names(
    run, alice, queues, funded
):
    endpoint = queues.api.endpoints.get(path="/v2/{name}:pause")
    example = run_request(endpoint, {})
    responses.post(f"{PROVIDER_URL}/v2/projects/my-project/queues/my-queue:pause", json={})

    answer = run(alice.live_key, **example)

    assert example["path"] == "/v2/projects/my-project/queues/my-queue:pause"
    assert answer.status_code == 200, answer.json()


@responses.activate
def test_a_multi_segment_value_may_not_climb_out_of_the_path(run, alice, queues, funded):
    body = error_of(run(alice.live_key, api="leads", path="/v2/projects/../admin:pause"), 400)
    assert "'..' segments" in body["error"]
    body = error_of(
        run(alice.live_key, api="leads", path="/v2/{name}", pathParams={"name": "a/../../b"}), 400
    )
    assert body["error"] == "pathParams.name may not be empty or hold '.' or '..' segments"
    assert not responses.calls


@responses.activate
def test_path_params_fill_the_template_and_are_percent_encoded(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/a%2Fb%3Fc", json={"status": "done"})
    response = run(alice.live_key, api="leads", path="/v1/jobs/{id}", pathParams={"id": "a/b?c"})
    assert response.status_code == 200, response.json()


def error_of(response, status):
    assert response.status_code == status, response.json()
    body = response.json()
    assert body["success"] is False
    return body


@responses.activate
def test_an_unfilled_placeholder_is_refused(run, alice, leads, funded):
    body = error_of(run(alice.live_key, api="leads", path="/v1/jobs/{id}"), 400)
    assert "{id}" in body["error"]
    assert not responses.calls


@responses.activate
def test_missing_required_parameters_are_named_before_any_charge(run, alice, leads, funded):
    body = error_of(run(alice.live_key, api="leads", path="/v2/domain-search", query={}), 400)
    assert body["code"] == "INVALID_REQUEST"
    assert "query.domain" in body["error"]
    body = error_of(run(alice.live_key, api="leads", path="/v1/people/enrich", body={}), 400)
    assert "body.email" in body["error"]
    assert not responses.calls
    assert not Hold.objects.exists()
    assert set(UsageEvent.objects.values_list("status", flat=True)) == {"rejected"}


@responses.activate
def test_a_misspelt_field_is_refused_before_any_call_or_charge(run, alice, leads, funded):
    body = error_of(
        run(alice.live_key, api="leads", path="/v1/people/enrich", params={"email": "a@b.co"}),
        400,
    )
    assert body["error"].startswith("params: unknown field; this request takes api, path,")
    assert "query" in body["error"] and "pathParams" in body["error"]
    assert not responses.calls
    assert not Hold.objects.exists()


def test_an_unknown_api_is_a_404_naming_the_slug(run, alice, leads):
    body = error_of(run(alice.live_key, api="nope", path="/v1/x"), 404)
    assert body["code"] == "NOT_FOUND" and "nope" in body["error"]


def test_an_unknown_path_is_a_404_naming_the_path(run, alice, leads):
    body = error_of(run(alice.live_key, api="leads", path="/v9/unknown"), 404)
    assert "/v9/unknown" in body["error"]


@responses.activate
def test_a_path_with_several_methods_needs_method(run, alice, leads, funded):
    body = error_of(run(alice.live_key, api="leads", path="/v1/items"), 400)
    assert "DELETE" in body["error"] and "GET" in body["error"]
    responses.delete(f"{PROVIDER_URL}/v1/items", json={"deleted": True})
    assert run(alice.live_key, api="leads", path="/v1/items", method="DELETE").status_code == 200
    assert responses.calls[0].request.method == "DELETE"


def test_a_body_for_a_get_endpoint_is_refused(run, alice, leads, funded):
    body = error_of(
        run(
            alice.live_key,
            api="leads",
            path="/v2/domain-search",
            query={"domain": "x.com"},
            body={"domain": "x.com"},
        ),
        400,
    )
    assert "takes no body" in body["error"]


@pytest.fixture
def deletions(leads):
    """DELETE endpoints with and without a documented body (Spotify removes playlist tracks with
    a JSON body on DELETE)."""
    make_endpoint(
        leads.api,
        "/v1/lists/{id}/members",
        "DELETE",
        path_params=[param("id", True)],
        body_type="object",
        body_params=[{**param("emails", True), "type": "array", "items": "string"}],
    )
    make_endpoint(leads.api, "/v1/lists/{id}", "DELETE", path_params=[param("id", True)])
    return leads


@responses.activate
def test_a_delete_that_documents_a_body_sends_it(run, alice, deletions, funded):
    responses.delete(f"{PROVIDER_URL}/v1/lists/7/members", json={"removed": 1})

    answer = run(
        alice.live_key, api="leads", path="/v1/lists/7/members", body={"emails": ["a@b.c"]}
    )

    assert answer.status_code == 200, answer.json()
    assert json.loads(responses.calls[0].request.body) == {"emails": ["a@b.c"]}
    missing = run(alice.live_key, api="leads", path="/v1/lists/7/members", body={})
    assert error_of(missing, 400)["error"] == "Missing required parameters: body.emails"


def test_a_delete_without_a_documented_body_refuses_one(run, alice, deletions, funded):
    body = error_of(run(alice.live_key, api="leads", path="/v1/lists/7", body={"a": 1}), 400)
    assert body["error"] == "DELETE /v1/lists/{id} takes no body; send its inputs in query"


@responses.activate
def test_the_example_calls_of_deletions_and_of_a_get_with_a_documented_body_succeed(
    run, alice, deletions, funded
):
    """Snippets send a body exactly when /v1/run takes one."""
    make_endpoint(
        deletions.api,
        "/v1/reports",
        "GET",
        body_type="object",
        body_params=[param("filter")],
    )
    responses.delete(re.compile(rf"{PROVIDER_URL}/v1/lists/.*"), json={})
    responses.get(f"{PROVIDER_URL}/v1/reports", json={})
    for path in ("/v1/lists/{id}/members", "/v1/lists/{id}", "/v1/reports"):
        endpoint = deletions.api.endpoints.get(path=path)
        example = run_request(endpoint, {})
        assert ("body" in example) == (path == "/v1/lists/{id}/members")
        answer = run(alice.live_key, **example)
        assert answer.status_code == 200, (path, answer.json())


@responses.activate
def test_an_email_or_a_commit_range_in_a_path_reaches_the_provider_encoded(
    run, alice, leads, funded
):
    make_endpoint(leads.api, "/v1/emails/{email}", "GET", path_params=[param("email", True)])
    make_endpoint(
        leads.api,
        "/v1/compare/{base}...{head}",
        "GET",
        path_params=[param("base", True), param("head", True)],
    )
    responses.get(f"{PROVIDER_URL}/v1/emails/jane%40example.com", json={"deliverable": True})
    responses.get(f"{PROVIDER_URL}/v1/compare/main...dev", json={"ahead_by": 2})

    for path in ("/v1/emails/jane@example.com", "/v1/emails/jane%40example.com"):
        answer = run(alice.live_key, api="leads", path=path)
        assert answer.status_code == 200, answer.json()
    compared = run(alice.live_key, api="leads", path="/v1/compare/main...dev")
    assert compared.status_code == 200, compared.json()
    assert [call.request.url for call in responses.calls] == [
        f"{PROVIDER_URL}/v1/emails/jane%40example.com",
        f"{PROVIDER_URL}/v1/emails/jane%40example.com",
        f"{PROVIDER_URL}/v1/compare/main...dev",
    ]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"path": "/v1/jobs"}, "api"),
        ({"api": "leads"}, "path"),
        ({"api": "leads", "path": "/v1/jobs", "body": "text"}, "body"),
        ({"api": "leads", "path": "/v1/jobs", "query": [1]}, "query"),
        ({"api": "leads", "path": "/v1/jobs", "method": "FETCH"}, "method"),
    ],
)
def test_malformed_run_requests_name_the_field(run, alice, leads, payload, field):
    body = error_of(run(alice.live_key, **payload), 400)
    assert body["error"].startswith(f"{field}:")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/../admin",
        "//evil.test/v1/jobs",
        "/v1/jobs/%2e%2e/x",
        "/v1/jobs\\x",
        "/v1/jobs/..%2F..%2Fadmin",
    ],
)
@responses.activate
def test_paths_that_could_leave_the_provider_are_refused(run, alice, leads, funded, path):
    error_of(run(alice.live_key, api="leads", path=path), 400)
    assert not responses.calls


@pytest.mark.parametrize("value", ["../../admin", "..\\admin", "."])
@responses.activate
def test_a_path_parameter_cannot_climb_out_of_the_path(run, alice, leads, funded, value):
    error_of(
        run(alice.live_key, api="leads", path="/v1/jobs/{id}", pathParams={"id": value}),
        400,
    )
    assert not responses.calls


@responses.activate
def test_a_catalog_path_with_its_own_query_string_sends_it_as_the_query(run, alice, leads, funded):
    make_endpoint(leads.api, "/v1/jobs/bytag?tag={tag}&page={page}", "GET")
    responses.get(f"{PROVIDER_URL}/v1/jobs/bytag", json={"jobs": []})

    answer = run(alice.live_key, api="leads", path="/v1/jobs/bytag?tag=a b&page=2")

    assert answer.status_code == 200, answer.json()
    assert responses.calls[0].request.url == f"{PROVIDER_URL}/v1/jobs/bytag?tag=a%20b&page=2"


@responses.activate
def test_an_at_sign_in_a_path_stays_in_the_providers_path(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/a%40evil.test", json={"status": "done"})
    assert run(alice.live_key, api="leads", path="/v1/jobs/a@evil.test").status_code == 200
    assert responses.calls[0].request.url == f"{PROVIDER_URL}/v1/jobs/a%40evil.test"


def test_a_test_key_on_an_api_without_a_sandbox_is_forbidden(run, alice, leads):
    leads.api.sandbox_base_url = ""
    leads.api.save(update_fields=["sandbox_base_url"])
    body = error_of(run(alice.test_key, api="leads", path="/v1/jobs/1"), 403)
    assert body["code"] == "FORBIDDEN" and "leads" in body["error"]


@responses.activate
def test_every_answer_carries_a_request_id_and_the_gateways_overhead(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/1", json={})
    response = run(alice.live_key, api="leads", path="/v1/jobs/1")
    assert re.fullmatch(r"run_\d{13}_[0-9a-f]{12}", response["X-Request-Id"])
    assert response.json()["requestId"] == response["X-Request-Id"]
    assert float(response["X-Gateway-Overhead-Ms"]) >= 0
    refused = run(alice.live_key, api="leads", path="/v9/none")
    assert refused["X-Request-Id"].startswith("run_")
    assert "X-Gateway-Overhead-Ms" in refused


def test_run_refuses_a_missing_key(client, leads):
    response = client.post(
        "/v1/run", {"api": "leads", "path": "/v1/jobs"}, content_type="application/json"
    )
    assert response.status_code == 401
