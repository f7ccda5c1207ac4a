"""POST /v1/run: pathParams names a template does not have are refused like unknown fields."""

import pytest
import responses

from credits.models import Hold
from tests.calls.conftest import PROVIDER_URL
from tests.factories import fund


@pytest.fixture
def funded(alice):
    return fund(alice.user, 10_000_000)


@responses.activate
def test_a_misspelt_path_parameter_is_refused_naming_it_and_the_templates_names(
    run, alice, leads, funded
):
    response = run(
        alice.live_key, api="leads", path="/v1/jobs/{id}", pathParams={"id": "j1", "jobId": "j1"}
    )

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "INVALID_REQUEST"
    assert body["error"] == ("pathParams.jobId: unknown path parameter; /v1/jobs/{id} takes id")
    assert not responses.calls
    assert not Hold.objects.exists()


@responses.activate
def test_path_parameters_for_a_path_without_placeholders_are_refused(run, alice, leads, funded):
    response = run(
        alice.live_key,
        api="leads",
        path="/v1/people/enrich",
        body={"email": "a@b.co"},
        pathParams={"id": "1"},
    )

    assert response.status_code == 400
    assert response.json()["error"] == (
        "pathParams.id: unknown path parameter; /v1/people/enrich takes no path parameters"
    )
    assert not responses.calls


@responses.activate
def test_known_path_parameters_still_fill_the_template(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/j7", json={"status": "done"})
    response = run(alice.live_key, api="leads", path="/v1/jobs/{id}", pathParams={"id": "j7"})
    assert response.status_code == 200
    assert response.json()["data"] == {"status": "done"}
