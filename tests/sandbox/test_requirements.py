"""The sandbox refuses what breaks a requirement that spans parameters, as the provider does."""

import pytest

from catalog.requirements import ANY_OF, ONE_OF
from sandbox.spec import catalog
from tests.sandbox.conftest import example_request

WITH_ALTERNATIVES = [
    operation
    for api in catalog().values()
    for operation in api.operations
    if any(ANY_OF in rule or ONE_OF in rule for rule in operation.requirements)
]


def _id(operation):
    return f"{operation.slug} {operation.method} {operation.template}"


def test_hunters_email_finder_without_domain_or_company_is_a_400_in_hunters_shape(sandbox):
    response = sandbox.call(
        "hunter", "GET", "/v2/email-finder", query={"first_name": "Ada", "last_name": "Lovelace"}
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {"id": "missing_parameter", "code": 400, "details": "domain or company is required"}
        ]
    }


def test_hunters_email_finder_with_a_company_and_a_full_name_answers(sandbox):
    response = sandbox.call(
        "hunter", "GET", "/v2/email-finder", query={"company": "Stripe", "full_name": "Ada L"}
    )
    assert response.status_code == 200, response.content


def test_both_of_two_exclusive_inputs_are_refused(sandbox):
    response = sandbox.call(
        "screenshotone", "GET", "/take", query={"url": "https://a.test", "html": "<p>x</p>"}
    )
    assert response.status_code == 400
    assert "only one of url or html" in response.content.decode()


def test_a_flag_that_needs_another_input_is_refused_without_it(sandbox):
    body = {"email": "ada@example.com", "reveal_phone_number": True}
    refused = sandbox.call("apollo", "POST", "/api/v1/people/match", body=body)
    accepted = sandbox.call(
        "apollo",
        "POST",
        "/api/v1/people/match",
        body={**body, "webhook_url": "https://hooks.example.com/apollo"},
    )
    assert refused.status_code == 400
    assert "webhook_url" in refused.content.decode()
    assert accepted.status_code == 200, accepted.content


def test_the_seed_catalog_states_the_rules_its_prose_gives():
    rules = {
        (operation.slug, operation.method, operation.template): list(operation.requirements)
        for api in catalog().values()
        for operation in api.operations
        if operation.requirements
    }
    assert rules[("hunter", "GET", "/v2/domain-search")] == [{"anyOf": [["domain"], ["company"]]}]
    assert rules[("hunter", "GET", "/v2/email-finder")] == [
        {"anyOf": [["domain"], ["company"]]},
        {"anyOf": [["first_name", "last_name"], ["full_name"], ["linkedin_handle"]]},
    ]
    assert rules[("screenshotone", "GET", "/take")] == [{"oneOf": [["url"], ["html"]]}]
    assert len(rules) == 23


@pytest.mark.parametrize("operation", WITH_ALTERNATIVES, ids=_id)
def test_an_example_without_any_alternative_is_refused(sandbox, operation):
    """The example request succeeds (test_every_operation); without the alternatives of its
    "one of" rules, the provider refuses it."""
    path, query, body = example_request(operation)
    for rule in operation.requirements:
        for group in rule.get(ANY_OF) or rule.get(ONE_OF) or []:
            for name in group:
                query.pop(name, None)
                if isinstance(body, dict):
                    body.pop(name, None)
    response = sandbox.call(operation.slug, operation.method, path, query=query, body=body)
    assert response.status_code == 400, response.content[:300]
