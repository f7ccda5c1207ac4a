"""Usage events are the history of calls: they outlive the key and the endpoint they name."""

from credits.models import UsageEvent
from credits.services.accounts import account_for_user
from credits.services.usage import usage_event_record
from tests.factories import api_key_row, make_endpoint, make_provider_api


def _event(persona, endpoint) -> UsageEvent:
    return usage_event_record(
        account=account_for_user(user=persona.user),
        api_key_id=api_key_row(persona.live_key).pk,
        request_id="run_1_abc",
        api_slug=endpoint.api.slug,
        path=endpoint.path,
        method=endpoint.method,
        status=UsageEvent.Status.COMPLETED,
        mode="live",
        cost_micros=10_000,
        latency_ms=12,
        endpoint_id=endpoint.pk,
    )


def test_deleting_a_key_keeps_its_calls_without_the_key(alice):
    event = _event(alice, make_endpoint(make_provider_api()))
    api_key_row(alice.live_key).delete()
    event.refresh_from_db()
    assert event.api_key_id is None
    assert (event.cost_micros, event.request_id) == (10_000, "run_1_abc")


def test_deleting_an_endpoint_keeps_its_calls_without_the_endpoint(alice):
    endpoint = make_endpoint(make_provider_api())
    event = _event(alice, endpoint)
    endpoint.delete()
    event.refresh_from_db()
    assert event.endpoint_id is None
    assert (event.api_slug, event.path) == ("acme-search", "/v1/search")
