"""An operation added to the catalog without a provider shape still gets a sensible answer."""

from django.test import RequestFactory

from sandbox.call import Call
from sandbox.handlers.generic import generic_handler, kind_of
from sandbox.spec import parse_document

DOCUMENT = {
    "x-gateway-api": {"slug": "newco", "category": "lead-enrichment"},
    "paths": {
        "/people/search": {
            "get": {
                "parameters": [{"name": "size", "in": "query", "schema": {"type": "integer"}}],
                "x-gateway-price": {
                    "kind": "per_result",
                    "resultsPath": "result.people",
                    "boundParam": "size",
                    "maxResults": 50,
                },
            }
        },
        "/email/verify": {"get": {"summary": "Verify an email", "x-gateway-price": "0.01"}},
        "/account": {"get": {"x-gateway-price": "0"}},
        "/jobs": {"post": {"x-gateway-poll": {"method": "GET", "path": "/jobs/{id}"}}},
        "/jobs/{id}": {"get": {"parameters": [{"name": "id", "in": "path"}]}},
    },
}


def _answer(api, template: str, method: str = "GET", inputs=None):
    operation = next(op for op in api.operations if op.template == template)
    request = RequestFactory().get("/")
    call = Call(api=api, op=operation, path=template, inputs=inputs or {}, body={}, request=request)
    return kind_of(api, operation), generic_handler(api, operation)(call)


def test_operations_are_classified_by_category_and_keywords():
    api = parse_document(DOCUMENT)
    kinds = {op.template: kind_of(api, op) for op in api.operations}
    assert kinds == {
        "/people/search": "people",
        "/email/verify": "email_verdict",
        "/account": "account",
        "/jobs": "job_start",
        "/jobs/{id}": "job_status",
    }


def test_a_generic_per_result_list_puts_its_items_at_the_results_path():
    api = parse_document(DOCUMENT)
    _kind, body = _answer(api, "/people/search", inputs={"size": 7})
    assert len(body["result"]["people"]) == 7


def test_a_generic_job_goes_from_in_progress_to_completed():
    api = parse_document(DOCUMENT)
    _kind, started = _answer(api, "/jobs", "POST")
    polls = [_answer(api, "/jobs/{id}", inputs={"id": started["id"]})[1] for _ in range(2)]
    assert [poll["status"] for poll in polls] == ["in_progress", "completed"]
