import re

import pytest

from catalog.selectors import endpoint_resolve
from catalog.services import provider_apis_set_enabled
from gateway.errors import InvalidRequest, NotFound
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db


@pytest.fixture
def jobs_api():
    api = make_provider_api("jobs")
    make_endpoint(api, "/v1/jobs", "GET")
    make_endpoint(api, "/v1/jobs", "POST")
    make_endpoint(api, "/v1/jobs/{id}", "GET")
    make_endpoint(api, "/v1/jobs/latest", "GET")
    make_endpoint(api, "/v1/jobs/{id}/runs/{run}", "GET")
    make_endpoint(api, "/v1/files/{name}.{ext}", "GET")
    make_endpoint(api, "/v1/hidden/{id}", "GET", enabled=False)
    return api


def test_a_catalog_path_resolves_to_its_endpoint_with_the_api_loaded(jobs_api):
    resolved = endpoint_resolve(api_slug="jobs", path="/v1/jobs/{id}")
    assert (resolved.endpoint.method, resolved.endpoint.path) == ("GET", "/v1/jobs/{id}")
    assert resolved.api.slug == "jobs"
    assert resolved.path_params == {}


def test_a_concrete_path_matches_its_template_and_gives_the_placeholder_values(jobs_api):
    resolved = endpoint_resolve(api_slug="jobs", path="/v1/jobs/abc/runs/7")
    assert resolved.endpoint.path == "/v1/jobs/{id}/runs/{run}"
    assert resolved.path_params == {"id": "abc", "run": "7"}
    files = endpoint_resolve(api_slug="jobs", path="/v1/files/report.pdf")
    assert files.path_params == {"name": "report", "ext": "pdf"}


def test_a_literal_path_wins_over_a_template_that_also_matches(jobs_api):
    assert endpoint_resolve(api_slug="jobs", path="/v1/jobs/latest").endpoint.path == (
        "/v1/jobs/latest"
    )
    assert endpoint_resolve(api_slug="jobs", path="/v1/jobs/other").endpoint.path == (
        "/v1/jobs/{id}"
    )


def test_a_path_with_several_methods_needs_a_method_and_the_error_lists_them(jobs_api):
    with pytest.raises(InvalidRequest, match=r"several methods \(GET, POST\)"):
        endpoint_resolve(api_slug="jobs", path="/v1/jobs")
    assert endpoint_resolve(api_slug="jobs", path="/v1/jobs", method="post").endpoint.method == (
        "POST"
    )


def test_a_method_the_path_does_not_have_is_not_found_and_names_the_methods_it_has(jobs_api):
    with pytest.raises(
        NotFound, match=re.escape("No DELETE /v1/jobs/{id} in API jobs; it has GET")
    ):
        endpoint_resolve(api_slug="jobs", path="/v1/jobs/{id}", method="DELETE")


def test_a_method_chooses_between_templates_that_fit_the_same_path():
    api = make_provider_api("teams")
    make_endpoint(api, "/teams/{id}/repos/{org}/{repo}", "PUT")
    make_endpoint(api, "/teams/{id}/repos/{owner}/{repo}", "GET")
    make_endpoint(api, "/teams/{id}/repos/{owner}/{repo}", "DELETE")
    make_endpoint(api, "/teams/latest", "GET")
    make_endpoint(api, "/teams/{id}", "DELETE")
    for method, template in [
        ("GET", "/teams/{id}/repos/{owner}/{repo}"),
        ("delete", "/teams/{id}/repos/{owner}/{repo}"),
        ("PUT", "/teams/{id}/repos/{org}/{repo}"),
    ]:
        resolved = endpoint_resolve(
            api_slug="teams", path="/teams/1/repos/acme/site", method=method
        )
        assert (resolved.endpoint.method, resolved.endpoint.path) == (method.upper(), template)
        assert resolved.path_params["id"] == "1"
    # A literal path without the method gives way to a template with it, and stays otherwise.
    deleted = endpoint_resolve(api_slug="teams", path="/teams/latest", method="DELETE")
    assert (deleted.endpoint.path, deleted.path_params) == ("/teams/{id}", {"id": "latest"})
    assert endpoint_resolve(api_slug="teams", path="/teams/latest").endpoint.path == (
        "/teams/latest"
    )
    with pytest.raises(
        NotFound, match=re.escape("No POST /teams/latest in API teams; it has DELETE, GET")
    ):
        endpoint_resolve(api_slug="teams", path="/teams/latest", method="POST")
    with pytest.raises(NotFound, match=re.escape("site in API teams; it has DELETE, GET, PUT")):
        endpoint_resolve(api_slug="teams", path="/teams/1/repos/acme/site", method="PATCH")


def test_a_multi_segment_placeholder_spans_slashes_and_the_most_literal_template_wins():
    api = make_provider_api("tasks")
    name = [{"name": "name", "type": "string", "required": True, "multiSegment": True}]
    for path in ("/v2/{name}", "/v2/{name}/locations", "/v2/{name}:pause"):
        make_endpoint(api, path, "POST" if ":" in path else "GET", path_params=name)
    make_endpoint(api, "/v2/queues/{id}/stats", "GET")
    make_endpoint(api, "/v2/projects/{project}/builds/{build}", "GET")

    def resolved(path):
        found = endpoint_resolve(api_slug="tasks", path=path)
        return found.endpoint.path, found.path_params

    assert resolved("/v2/projects/p/queues/q") == ("/v2/{name}", {"name": "projects/p/queues/q"})
    assert resolved("/v2/projects/p/locations") == ("/v2/{name}/locations", {"name": "projects/p"})
    assert resolved("/v2/projects/p/queues/q:pause") == (
        "/v2/{name}:pause",
        {"name": "projects/p/queues/q"},
    )
    # a placeholder without the mark still takes one segment, and wins where both fit
    assert resolved("/v2/queues/q1/stats") == ("/v2/queues/{id}/stats", {"id": "q1"})
    assert resolved("/v2/projects/p/builds/b") == (
        "/v2/projects/{project}/builds/{build}",
        {"project": "p", "build": "b"},
    )


def test_an_unknown_slug_is_not_found_and_named(jobs_api):
    with pytest.raises(NotFound, match="Unknown API: nope"):
        endpoint_resolve(api_slug="nope", path="/v1/jobs")


def test_an_unknown_path_is_not_found_and_named(jobs_api):
    with pytest.raises(NotFound, match="No endpoint /v2/other in API jobs"):
        endpoint_resolve(api_slug="jobs", path="/v2/other")
    with pytest.raises(NotFound):
        endpoint_resolve(api_slug="jobs", path="/v1/jobs/a/b")  # a value never spans segments


def test_a_template_with_its_own_query_string_is_not_swallowed_by_a_placeholder(jobs_api):
    """ShipStation's /orders/listbytag?orderStatus={orderStatus}&tagId={tagId} beside
    /orders/{orderId}: the fewer placeholders of the second must not take the query string."""
    make_endpoint(jobs_api, "/v1/jobs/bytag?tag={tag}&page={page}", "GET")

    resolved = endpoint_resolve(api_slug="jobs", path="/v1/jobs/bytag?tag=a%20b&page=2")

    assert resolved.endpoint.path == "/v1/jobs/bytag?tag={tag}&page={page}"
    assert resolved.path_params == {"tag": "a%20b", "page": "2"}


def test_a_query_string_sent_in_the_path_is_not_taken_for_a_value(jobs_api):
    with pytest.raises(NotFound, match="send query parameters in query, not in the path"):
        endpoint_resolve(api_slug="jobs", path="/v1/jobs/abc?verbose=1")


def test_disabled_endpoints_and_disabled_apis_do_not_resolve(jobs_api):
    with pytest.raises(NotFound):
        endpoint_resolve(api_slug="jobs", path="/v1/hidden/1")
    provider_apis_set_enabled(api_ids=[jobs_api.pk], enabled=False)
    with pytest.raises(NotFound, match="Unknown API: jobs"):
        endpoint_resolve(api_slug="jobs", path="/v1/jobs/{id}")
