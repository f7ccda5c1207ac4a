"""POST /v1/run: what a call costs and who is paid."""

import json

import pytest
import responses
from django.core.management import call_command

from calls.answers import MAX_PROVIDER_JSON_DEPTH
from calls.pricing import DEFAULT_MAX_OUTPUT_TOKENS
from credits.models import Account, Hold, LedgerEntry, UsageEvent
from credits.services.accounts import account_for_organization
from tests.calls.conftest import PROVIDER_URL, param
from tests.factories import fund, make_endpoint, make_provider_api

pytestmark = pytest.mark.usefixtures("both_settlements")


@pytest.fixture
def funded(alice):
    return fund(alice.user, 10_000_000)


def balance(account: Account) -> int:
    account.refresh_from_db()
    return account.balance_micros


@responses.activate
def test_a_successful_call_is_charged_its_price_once(run, alice, leads, funded, settings):
    settings.PLATFORM_FEE_BPS = 1000
    responses.post(f"{PROVIDER_URL}/v1/people/enrich", json={"person": {"name": "Ada"}})

    response = run(alice.live_key, api="leads", path="/v1/people/enrich", body={"email": "a@b.c"})

    body = response.json()
    assert response.status_code == 200
    assert body == {
        "success": True,
        "priceCents": 5,
        "data": {"person": {"name": "Ada"}},
        "requestId": body["requestId"],
        "billing": {"requestId": body["requestId"], "charged": True},
    }
    assert balance(funded) == 10_000_000 - 50_000
    assert balance(account_for_organization(organization=leads.owner)) == 45_000
    legs = LedgerEntry.objects.filter(event_ref=f"call:{body['requestId']}")
    assert sorted(leg.type for leg in legs) == ["api_call", "fee", "revenue"]
    caller_leg = legs.get(type="api_call")
    assert caller_leg.metadata["api"] == "leads"
    assert caller_leg.metadata["path"] == "/v1/people/enrich"
    event = UsageEvent.objects.get(request_id=body["requestId"])
    assert (event.status, event.cost_micros, event.mode, event.method) == (
        "completed",
        50_000,
        "live",
        "POST",
    )
    call_command("check_ledger")


@responses.activate
def test_an_endpoint_with_the_longest_slug_and_path_is_charged_like_any_other(run, alice, funded):
    """Azure's recovery-services paths run past 400 characters: the call's description
    ("<slug> <METHOD> <path>") must fit the hold and the ledger."""
    slug = "a" * 100
    path = "/v1/" + "/".join(f"segment{n:03}" for n in range(44)) + "/" + "x" * 7 + "/{id}"
    api = make_provider_api(slug, base_url=PROVIDER_URL)
    make_endpoint(api, path, "GET", summary="Deep", path_params=[param("id", True)])
    concrete = path.replace("{id}", "42")
    responses.get(f"{PROVIDER_URL}{concrete}", json={"ok": True})

    response = run(alice.live_key, api=slug, path=concrete)

    assert len(path) == 500 and response.status_code == 200, response.json()
    assert balance(funded) == 10_000_000 - 10_000
    caller_leg = LedgerEntry.objects.get(type="api_call")
    assert caller_leg.description == f"{slug} GET {path}"
    call_command("check_ledger")


@responses.activate
def test_too_little_credit_is_a_402_and_the_provider_is_not_called(run, charlie, leads):
    fund(charlie.user, 30_000)
    response = run(charlie.live_key, api="leads", path="/v1/people/enrich", body={"email": "x"})

    assert response.status_code == 402
    assert response.json() == {
        "success": False,
        "error": "Insufficient credits: this call costs $0.05 and $0.03 is available",
        "code": "INSUFFICIENT_CREDITS",
        "priceCents": 5,
    }
    assert not responses.calls
    assert UsageEvent.objects.get().status == "rejected"


@responses.activate
def test_per_result_pricing_charges_the_results_returned_not_the_hold(run, alice, leads, funded):
    emails = [{"value": f"p{i}@stripe.com"} for i in range(3)]
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": emails}})

    response = run(
        alice.live_key,
        api="leads",
        path="/v2/domain-search",
        query={"domain": "stripe.com", "limit": 10},
    )

    assert response.json()["priceCents"] == 0.75
    assert balance(funded) == 10_000_000 - 3 * 2_500
    assert Hold.objects.get().amount_micros == 10 * 2_500
    assert Hold.objects.get().captured_micros == 3 * 2_500


@responses.activate
def test_per_result_pricing_holds_the_maximum_when_the_request_sets_no_bound(run, charlie, leads):
    fund(charlie.user, 2_500 * 50)  # less than the 100-result maximum the quote needs
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": []}})
    response = run(
        charlie.live_key, api="leads", path="/v2/domain-search", query={"domain": "x.com"}
    )
    assert response.status_code == 402
    assert response.json()["priceCents"] == 25


@pytest.mark.parametrize(
    ("path", "inputs", "named"),
    [
        ("/v2/domain-search", {"query": {"domain": "x.com", "limit": 0}}, "query.limit"),
        ("/v2/domain-search", {"query": {"domain": "x.com", "limit": "ten"}}, "query.limit"),
        (
            "/api/paas/v4/chat/completions",
            {"body": {"model": "glm-4", "messages": [], "max_tokens": 0}},
            "body.max_tokens",
        ),
    ],
)
@responses.activate
def test_a_bound_below_one_is_refused_before_any_call(
    run, alice, leads, funded, path, inputs, named
):
    """A bound of 0 would be quoted as nothing, yet a provider may read it as its default."""
    response = run(alice.live_key, api="leads", path=path, **inputs)

    assert response.status_code == 400
    assert response.json()["error"] == f"{named} must be a positive integer"
    assert not responses.calls
    assert balance(funded) == 10_000_000


@responses.activate
def test_a_catalog_default_of_zero_tokens_holds_the_gateways_default(run, alice, leads, funded):
    chat = leads.chat
    responses.post(f"{PROVIDER_URL}{chat.path}", json={"choices": []})
    messages = [{"role": "user", "content": "Hello"}]

    chat.default_max_tokens = 0
    chat.save()
    run(alice.live_key, api="leads", path=chat.path, body={"model": "glm-4", "messages": messages})
    explicit = {"model": "glm-4", "messages": messages, "max_tokens": DEFAULT_MAX_OUTPUT_TOKENS}
    run(alice.live_key, api="leads", path=chat.path, body=explicit)

    unset, asked = Hold.objects.order_by("pk").values_list("amount_micros", flat=True)
    assert unset == asked > 0


@responses.activate
def test_dynamic_pricing_charges_the_tokens_used(run, alice, leads, funded):
    responses.post(
        f"{PROVIDER_URL}/api/paas/v4/chat/completions",
        json={
            "choices": [{"message": {"role": "assistant", "content": "Hi"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
        },
    )
    response = run(
        alice.live_key,
        api="leads",
        path="/api/paas/v4/chat/completions",
        body={
            "model": "glm-4",
            "messages": [{"role": "user", "content": "Hello"}],
            "max_tokens": 200,
        },
    )

    assert response.status_code == 200
    actual = -(-(12 * 600_000 + 30 * 2_200_000) // 1_000_000)
    assert balance(funded) == 10_000_000 - actual
    hold = Hold.objects.get()
    assert hold.captured_micros == actual < hold.amount_micros


@pytest.mark.parametrize(("status", "answered"), [(404, 404), (422, 422), (500, 502), (503, 502)])
@responses.activate
def test_a_provider_error_is_passed_on_and_not_charged(run, alice, leads, funded, status, answered):
    responses.post(
        f"{PROVIDER_URL}/v1/people/enrich",
        status=status,
        json={"error": {"message": "person not found"}},
    )

    response = run(alice.live_key, api="leads", path="/v1/people/enrich", body={"email": "x"})

    assert response.status_code == answered
    body = response.json()
    assert body["code"] == "UPSTREAM_ERROR"
    assert body["upstreamStatus"] == status
    assert body["data"] == {"error": {"message": "person not found"}}
    assert "person not found" in body["error"]
    assert balance(funded) == 10_000_000
    assert Hold.objects.get().status == "released"
    assert UsageEvent.objects.get().status == "failed"
    call_command("check_ledger")


@responses.activate
def test_a_timeout_is_a_504_and_not_charged(run, alice, leads, funded):
    import requests

    responses.post(f"{PROVIDER_URL}/v1/people/enrich", body=requests.ReadTimeout("slow"))
    response = run(alice.live_key, api="leads", path="/v1/people/enrich", body={"email": "x"})
    assert response.status_code == 504
    assert response.json()["code"] == "UPSTREAM_ERROR"
    assert balance(funded) == 10_000_000


@responses.activate
def test_a_test_key_calls_the_sandbox_and_is_never_charged(run, alice, leads, funded):
    responses.post(f"{leads.sandbox_url}/v1/people/enrich", json={"person": {"sandbox": True}})

    response = run(alice.test_key, api="leads", path="/v1/people/enrich", body={"email": "x"})

    body = response.json()
    assert response.status_code == 200
    assert body["billing"]["charged"] is False
    assert body["data"] == {"person": {"sandbox": True}}
    assert balance(funded) == 10_000_000
    event = UsageEvent.objects.get()
    assert (event.mode, event.cost_micros) == ("test", 0)
    assert not Hold.objects.exists()


@responses.activate
def test_an_async_job_is_charged_when_started_and_polled_for_free(run, alice, leads, funded):
    responses.post(f"{PROVIDER_URL}/v1/jobs", status=202, json={"job_id": "j1"})
    responses.get(f"{PROVIDER_URL}/v1/jobs/j1", json={"status": "completed"})

    started = run(alice.live_key, api="leads", path="/v1/jobs", body={"domains": ["a.com"]})
    polled = [run(alice.live_key, api="leads", path="/v1/jobs/j1") for _ in range(3)]

    assert started.json()["billing"]["charged"] is True
    assert all(p.json()["billing"]["charged"] is False for p in polled)
    assert balance(funded) == 10_000_000 - 100_000


@responses.activate
def test_a_priced_poll_endpoint_is_still_free(run, alice, leads, funded):
    leads.job_poll.price_kind, leads.job_poll.price_micros = "fixed", 10_000
    leads.job_poll.save()
    responses.get(f"{PROVIDER_URL}/v1/jobs/j1", json={"status": "completed"})
    assert (
        run(alice.live_key, api="leads", path="/v1/jobs/j1").json()["billing"]["charged"] is False
    )
    assert balance(funded) == 10_000_000


def search_page(run, key, *, offset=0, domain="stripe.com", parent=None):
    payload = {
        "api": "leads",
        "path": "/v2/domain-search",
        "query": {"domain": domain, "limit": 2, "offset": offset},
    }
    if parent:
        payload["parentRequestId"] = parent
    return run(key, **payload)


@responses.activate
def test_a_continuation_page_is_quoted_but_not_charged(run, alice, leads, funded):
    responses.get(
        f"{PROVIDER_URL}/v2/domain-search",
        json={"data": {"emails": [{"value": "a"}, {"value": "b"}]}},
    )
    first = search_page(run, alice.live_key).json()
    parent = first["billing"]["requestId"]

    second = search_page(run, alice.live_key, offset=2, parent=parent).json()
    third = search_page(run, alice.live_key, offset=4, parent=second["requestId"]).json()

    assert first["billing"]["charged"] is True and first["priceCents"] == 0.5
    assert second["billing"] == {
        "requestId": second["requestId"],
        "parentRequestId": parent,
        "charged": False,
    }
    assert second["priceCents"] == 0.5
    assert second["requestId"] != parent
    assert third["billing"]["charged"] is False
    assert balance(funded) == 10_000_000 - 2 * 2_500
    assert "offset=4" in responses.calls[2].request.url


@responses.activate
def test_changing_a_filter_starts_a_new_billable_request(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": [{"v": 1}]}})
    parent = search_page(run, alice.live_key).json()["requestId"]

    other = search_page(run, alice.live_key, offset=1, domain="openai.com", parent=parent).json()

    assert other["billing"] == {"requestId": other["requestId"], "charged": True}
    assert balance(funded) == 10_000_000 - 2 * 2_500


@responses.activate
def test_a_parent_of_another_account_or_unknown_is_refused(run, alice, charlie, leads, funded):
    fund(charlie.user, 1_000_000)
    responses.get(f"{PROVIDER_URL}/v2/domain-search", json={"data": {"emails": [{"v": 1}]}})
    parent = search_page(run, alice.live_key).json()["requestId"]

    for key, parent_id in [(charlie.live_key, parent), (alice.live_key, "run_1_nope")]:
        response = search_page(run, key, offset=1, parent=parent_id)
        assert response.status_code == 400
        assert "parentRequestId" in response.json()["error"]
    assert len(responses.calls) == 1


@responses.activate
def test_text_and_binary_answers_are_wrapped(run, alice, leads, funded):
    responses.get(f"{PROVIDER_URL}/v1/jobs/t", body="plain words", content_type="text/plain")
    responses.get(f"{PROVIDER_URL}/v1/jobs/b", body=b"\x89PNG\r\n", content_type="image/png")
    assert run(alice.live_key, api="leads", path="/v1/jobs/t").json()["data"] == "plain words"
    image = run(alice.live_key, api="leads", path="/v1/jobs/b").json()["data"]
    assert image == {"contentType": "image/png", "encoding": "base64", "content": "iVBORw0K"}


@responses.activate
@pytest.mark.parametrize("levels", [MAX_PROVIDER_JSON_DEPTH + 1, 100_000])
def test_an_answer_nested_too_deeply_is_passed_on_as_text_and_charged(
    run, alice, leads, funded, levels
):
    text = "[" * levels + "]" * levels
    responses.get(f"{PROVIDER_URL}/v1/items", body=text, content_type="application/json")
    response = run(alice.live_key, api="leads", path="/v1/items", method="GET")
    assert response.status_code == 200
    assert response.json()["data"] == text
    assert response.json()["billing"]["charged"] is True


@responses.activate
def test_a_list_body_is_sent_as_is(run, alice, leads, funded):
    leads.job_start.body_params = []
    leads.job_start.save()
    responses.post(f"{PROVIDER_URL}/v1/jobs", json={"job_id": "j2"})
    run(alice.live_key, api="leads", path="/v1/jobs", body=[{"domain": "a.com"}])
    assert json.loads(responses.calls[0].request.body) == [{"domain": "a.com"}]
