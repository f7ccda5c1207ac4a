import json

import pytest

from sandbox.spec import catalog
from tests.sandbox.conftest import content_of, example_request

OPERATIONS = [operation for api in catalog().values() for operation in api.operations]
BINARY_TYPES = ("image/", "application/pdf", "video/", "text/html", "text/plain", "text/markdown")


def _id(operation):
    return f"{operation.slug} {operation.method} {operation.template}"


def test_the_sandbox_knows_every_seed_operation():
    assert len(catalog()) == 35
    assert len(OPERATIONS) == 216


@pytest.mark.parametrize("operation", OPERATIONS, ids=_id)
def test_every_operation_answers_its_required_inputs_with_a_success(sandbox, operation):
    path, query, body = example_request(operation)
    response = sandbox.call(operation.slug, operation.method, path, query=query, body=body)
    content = content_of(response)
    assert 200 <= response.status_code < 300, content[:500]
    content_type = response["Content-Type"]
    if content_type.startswith("application/json"):
        json.loads(content)
    else:
        assert content_type.startswith(BINARY_TYPES), content_type
        assert content


@pytest.mark.parametrize("operation", [op for op in OPERATIONS if op.per_result], ids=_id)
def test_a_per_result_operation_returns_as_many_results_as_its_bound_asks(sandbox, operation):
    price = operation.per_result
    path, query, body = example_request(operation)
    bound, schema = price["boundParam"], operation.input_schema(price["boundParam"])
    wanted = min(max(schema.get("minimum", 1), 7), price["maxResults"])
    if operation.param(bound):
        query[bound] = wanted
    else:
        body[bound] = wanted
    response = sandbox.call(operation.slug, operation.method, path, query=query, body=body)
    value = response.json()
    for part in price["resultsPath"].split("."):
        value = value[part]
    assert (len(value) if isinstance(value, list) else value) == wanted


@pytest.mark.parametrize("operation", [op for op in OPERATIONS if op.per_result], ids=_id)
def test_a_per_result_operation_without_its_bound_returns_the_default(sandbox, operation):
    price = operation.per_result
    path, query, body = example_request(operation)
    response = sandbox.call(operation.slug, operation.method, path, query=query, body=body)
    value = response.json()
    for part in price["resultsPath"].split("."):
        value = value[part]
    default = operation.input_schema(price["boundParam"]).get("default", 10)
    assert len(value) == min(default, price["maxResults"])


# Starting a job answers with a new job id each time (the id carries its start time).
JOB_STARTS = {
    ("snov", "POST", "/v2/emails-by-domain-by-name/start"),
    ("snov", "POST", "/v2/email-verification/start"),
    ("neverbounce", "POST", "/v4.2/jobs/create"),
    ("thecompaniesapi", "POST", "/v2/actions"),
}


def _repeatable(operation) -> bool:
    api = catalog()[operation.slug]
    return not (
        operation.poll
        or (operation.method, operation.template) in api.poll_targets
        or operation.key in JOB_STARTS
    )


@pytest.mark.parametrize("operation", [op for op in OPERATIONS if _repeatable(op)], ids=_id)
def test_the_same_request_twice_gets_the_same_answer(sandbox, operation):
    path, query, body = example_request(operation)
    first = sandbox.call(operation.slug, operation.method, path, query=query, body=body)
    second = sandbox.call(operation.slug, operation.method, path, query=query, body=body)
    assert content_of(first) == content_of(second)
