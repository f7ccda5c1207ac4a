"""POST /v1/run: requirements that span parameters are refused before anything is charged, and
a per-result quote without a bound uses the provider's documented default."""

import pytest
import responses

from credits.models import Account, Hold, UsageEvent
from tests.calls.conftest import PROVIDER_URL, param
from tests.factories import fund, make_endpoint


@pytest.fixture
def finder(leads):
    """Hunter's email finder as the catalog holds it: a domain or a company, and a name."""
    return make_endpoint(
        leads.api,
        "/v2/email-finder",
        "GET",
        price_micros=10_000,
        query_params=[
            param("domain"),
            param("company"),
            param("first_name"),
            param("last_name"),
            param("full_name"),
        ],
        requirements=[
            {"anyOf": [["domain"], ["company"]]},
            {"anyOf": [["first_name", "last_name"], ["full_name"]]},
        ],
    )


def balance(account: Account) -> int:
    account.refresh_from_db()
    return account.balance_micros


@responses.activate
def test_a_call_missing_every_alternative_is_a_400_naming_them_that_costs_nothing(
    run, alice, finder
):
    account = fund(alice.user, 1_000_000)

    response = run(alice.live_key, api="leads", path="/v2/email-finder", query={"full_name": "A"})

    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_REQUEST"
    assert response.json()["error"] == ("GET /v2/email-finder needs query.domain or query.company")
    assert len(responses.calls) == 0
    assert balance(account) == 1_000_000
    assert not Hold.objects.exists()
    event = UsageEvent.objects.get(request_id=response["X-Request-Id"])
    assert (event.status, event.cost_micros) == ("rejected", 0)


@responses.activate
def test_every_broken_requirement_is_named_at_once(run, alice, finder):
    fund(alice.user, 1_000_000)

    response = run(alice.live_key, api="leads", path="/v2/email-finder", query={"first_name": "A"})

    assert response.status_code == 400
    assert response.json()["error"] == (
        "GET /v2/email-finder needs query.domain or query.company; query.first_name and "
        "query.last_name, or query.full_name"
    )


@responses.activate
def test_an_empty_value_does_not_count_as_sent(run, alice, finder):
    fund(alice.user, 1_000_000)

    response = run(
        alice.live_key,
        api="leads",
        path="/v2/email-finder",
        query={"domain": "", "full_name": "Ada Lovelace"},
    )

    assert response.status_code == 400
    assert "query.domain or query.company" in response.json()["error"]


@responses.activate
def test_a_call_with_one_alternative_of_each_is_run_and_charged(run, alice, finder):
    account = fund(alice.user, 1_000_000)
    responses.get(f"{PROVIDER_URL}/v2/email-finder", json={"data": {"email": "ada@x.com"}})

    response = run(
        alice.live_key,
        api="leads",
        path="/v2/email-finder",
        query={"company": "X", "first_name": "Ada", "last_name": "Lovelace"},
    )

    assert response.status_code == 200, response.json()
    assert balance(account) == 1_000_000 - 10_000


@responses.activate
def test_a_flag_sent_as_false_needs_nothing_but_true_needs_its_companion(run, alice, leads):
    fund(alice.user, 1_000_000)
    make_endpoint(
        leads.api,
        "/v1/people/match",
        "POST",
        body_type="object",
        body_params=[param("email"), param("reveal_phone", type_="boolean"), param("webhook")],
        requirements=[{"if": "reveal_phone", "then": ["webhook"]}],
    )
    responses.post(f"{PROVIDER_URL}/v1/people/match", json={"person": {}})

    off = run(alice.live_key, api="leads", path="/v1/people/match", body={"reveal_phone": False})
    on = run(alice.live_key, api="leads", path="/v1/people/match", body={"reveal_phone": True})

    assert off.status_code == 200
    assert on.status_code == 400
    assert on.json()["error"] == (
        "POST /v1/people/match needs body.webhook (for body.reveal_phone)"
    )


@responses.activate
def test_a_test_key_is_refused_the_same_way(run, alice, finder):
    response = run(alice.test_key, api="leads", path="/v2/email-finder", query={"full_name": "A"})

    assert response.status_code == 400
    assert "query.domain or query.company" in response.json()["error"]


# --- Quotes of per-result prices ---------------------------------------------------------------


@pytest.fixture
def search_with_default(leads):
    """The domain search whose limit the provider documents as 10 by default."""
    leads.search.query_params = [
        param("domain", True),
        {**param("limit", type_="integer"), "default": 10, "maximum": 100},
        param("offset", type_="integer"),
    ]
    leads.search.save(update_fields=["query_params"])
    return leads.search


@responses.activate
def test_a_per_result_quote_without_a_bound_uses_the_documented_default(
    run, charlie, search_with_default
):
    fund(charlie.user, 10_000)  # a cent: less than the ten results ($0.025) the quote needs

    response = run(
        charlie.live_key, api="leads", path="/v2/domain-search", query={"domain": "x.com"}
    )

    assert response.status_code == 402
    assert response.json()["priceCents"] == 2.5
    assert len(responses.calls) == 0


@responses.activate
def test_a_balance_that_covers_the_default_is_charged_for_the_results_returned(
    run, charlie, search_with_default
):
    account = fund(charlie.user, 25_000)
    emails = [{"value": f"{n}@x.com"} for n in range(4)]
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": emails}})

    response = run(
        charlie.live_key, api="leads", path="/v2/domain-search", query={"domain": "x.com"}
    )

    assert response.status_code == 200
    assert response.json()["priceCents"] == 1
    assert balance(account) == 25_000 - 4 * 2_500


@responses.activate
def test_a_bound_sent_wins_over_the_default_up_to_the_maximum(run, charlie, search_with_default):
    fund(charlie.user, 10_000)

    response = run(
        charlie.live_key,
        api="leads",
        path="/v2/domain-search",
        query={"domain": "x.com", "limit": 500},
    )

    assert response.status_code == 402
    assert response.json()["priceCents"] == 25  # the 100-result maximum
