from datetime import timedelta

import pytest
from django.utils import timezone

from credits.services.accounts import account_for_organization, account_for_user
from credits.services.holds import hold_capture, hold_reserve
from credits.services.ledger import credits_grant
from credits.services.usage import usage_event_record
from gateway.pagination import MAX_OFFSET
from tests.factories import fund, provider_account


def record_usage(account, request_id, *, days_ago=0, cost=10_000, status="completed", api="hunter"):
    return usage_event_record(
        account=account,
        api_key_id=None,
        request_id=request_id,
        api_slug=api,
        path="/v2/domain-search",
        method="GET",
        status=status,
        mode="live",
        cost_micros=cost,
        latency_ms=120,
        created_at=timezone.now() - timedelta(days=days_ago),
    )


def charge(account, request_id, micros, provider=None):
    hold_reserve(
        account=account,
        amount_micros=micros,
        request_id=request_id,
        metadata={"api": "hunter", "path": "/v2/domain-search"},
    )
    hold_capture(
        request_id=request_id,
        amount_micros=micros,
        provider_account=provider or provider_account(),
        description="hunter /v2/domain-search",
    )


CREDIT_ROUTES = [
    ("get", "/v1/credits/balance"),
    ("post", "/v1/credits/check"),
    ("get", "/v1/credits/usage"),
    ("get", "/v1/credits/transactions"),
]


@pytest.mark.parametrize(("method", "path"), CREDIT_ROUTES)
def test_every_credits_route_refuses_a_missing_key(client_for, db, method, path):
    response = getattr(client_for(None), method)(path)
    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHORIZED"


# --- balance -------------------------------------------------------------------------------


def test_the_balance_is_what_is_available_after_pending_holds(client_for, alice):
    account = fund(alice.user, 12_500_000)
    hold_reserve(account=account, amount_micros=2_000_000, request_id="run_b")
    response = client_for(alice.live_key).get("/v1/credits/balance")
    assert response.status_code == 200
    assert response.json() == {"success": True, "balance": "$10.50"}


def test_a_new_user_has_a_zero_balance(client_for, charlie):
    assert client_for(charlie.live_key).get("/v1/credits/balance").json()["balance"] == "$0.00"


def test_an_organization_key_reads_the_organizations_revenue(client_for, alice, charlie, settings):
    settings.PLATFORM_FEE_BPS = 1000
    org_account = account_for_organization(organization=alice.organization)
    charge(fund(charlie.user, 1_000_000), "run_rev", 100_000, provider=org_account)
    assert client_for(alice.org_key).get("/v1/credits/balance").json()["balance"] == "$0.09"
    assert client_for(alice.live_key).get("/v1/credits/balance").json()["balance"] == "$0.00"


def test_an_outsider_never_sees_another_accounts_balance(client_for, alice, charlie):
    fund(alice.user, 5_000_000)
    assert client_for(charlie.live_key).get("/v1/credits/balance").json()["balance"] == "$0.00"


def test_overdue_holds_do_not_hide_funds_from_the_balance(client_for, alice):
    account = fund(alice.user, 1_000_000)
    hold_reserve(account=account, amount_micros=1_000_000, request_id="run_x", ttl_seconds=-1)
    assert client_for(alice.live_key).get("/v1/credits/balance").json()["balance"] == "$1.00"


# --- check ---------------------------------------------------------------------------------


def test_check_reports_a_shortfall(client_for, alice):
    fund(alice.user, 12_500_000)
    response = client_for(alice.live_key).post(
        "/v1/credits/check", {"amountCents": 2000}, format="json"
    )
    assert response.json() == {
        "success": True,
        "sufficient": False,
        "balanceCents": 1250,
        "requiredCents": 2000,
        "shortfallCents": 750,
    }


def test_check_reports_sufficient_with_a_zero_shortfall_and_fractions_of_a_cent(client_for, alice):
    fund(alice.user, 12_500_000)
    body = (
        client_for(alice.live_key)
        .post("/v1/credits/check", {"amountCents": 0.25}, format="json")
        .json()
    )
    assert body["sufficient"] is True
    assert body["requiredCents"] == 0.25
    assert body["shortfallCents"] == 0


@pytest.mark.parametrize(
    "payload",
    [
        {"amountCents": -1},
        {"amountCents": "lots"},
        {},
        {"amountCents": True},
        {"amountCents": 0.00001},
        {"amountCents": None},
    ],
)
def test_check_refuses_a_bad_amount_naming_the_field(client_for, alice, payload):
    response = client_for(alice.live_key).post("/v1/credits/check", payload, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "INVALID_REQUEST"
    assert body["error"].startswith("amountCents:")


@pytest.mark.parametrize("amount", [0.1 + 0.2, 0.00001, 1e12])
def test_a_too_precise_or_too_large_amount_is_told_what_is_allowed(client_for, alice, amount):
    response = client_for(alice.live_key).post(
        "/v1/credits/check", {"amountCents": amount}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["error"] == (
        "amountCents: Give at most 4 decimal places (a micro-dollar) and 12 digits before the "
        "decimal point."
    )


# --- usage ---------------------------------------------------------------------------------


def test_usage_lists_the_window_newest_first_with_totals(client_for, alice):
    account = account_for_user(user=alice.user)
    record_usage(account, "run_old", days_ago=40)
    record_usage(account, "run_2", days_ago=2, cost=25_000)
    record_usage(account, "run_1", days_ago=1, cost=0, status="failed")
    record_usage(account, "run_0", days_ago=0)

    body = client_for(alice.live_key).get("/v1/credits/usage").json()

    assert [event["requestId"] for event in body["usage"]] == ["run_0", "run_1", "run_2"]
    assert body["totalSpent"] == "$0.035"
    assert body["pagination"] == {"limit": 50, "offset": 0, "count": 3, "total": 3}
    first = body["usage"][0]
    assert set(first) == {"api", "path", "method", "timestamp", "cost", "status", "requestId"}
    assert first["cost"] == "$0.01" and first["status"] == "completed"
    assert body["usage"][1]["status"] == "failed"


def test_usage_pages_and_widens_the_window(client_for, alice):
    account = account_for_user(user=alice.user)
    for index in range(5):
        record_usage(account, f"run_{index}", days_ago=index * 20)

    client = client_for(alice.live_key)
    page = client.get("/v1/credits/usage", {"limit": 2, "offset": 1, "days": 365}).json()

    assert [event["requestId"] for event in page["usage"]] == ["run_1", "run_2"]
    assert page["pagination"] == {"limit": 2, "offset": 1, "count": 2, "total": 5}
    assert client.get("/v1/credits/usage", {"days": 30}).json()["pagination"]["total"] == 2


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 201}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": 850414915561514137747980288}, "offset"),
        ({"days": 366}, "days"),
        ({"days": 0}, "days"),
        ({"limit": "ten"}, "limit"),
        ({"limit": ""}, "limit"),
        ({"days": ""}, "days"),
    ],
)
def test_usage_refuses_out_of_bounds_parameters(client_for, alice, params, field):
    response = client_for(alice.live_key).get("/v1/credits/usage", params)
    assert response.status_code == 400
    assert response.json()["error"].startswith(f"{field}:")


def test_an_outsider_never_sees_another_accounts_usage(client_for, alice, charlie):
    record_usage(account_for_user(user=alice.user), "run_alice")
    body = client_for(charlie.live_key).get("/v1/credits/usage").json()
    assert body["usage"] == [] and body["pagination"]["total"] == 0


# --- transactions --------------------------------------------------------------------------


def test_transactions_list_charges_negative_and_credits_positive_newest_first(client_for, alice):
    account = fund(alice.user, 1_000_000)
    charge(account, "run_t", 2_500)

    body = client_for(alice.live_key).get("/v1/credits/transactions").json()

    charge_entry, grant_entry = body["transactions"]
    assert charge_entry["type"] == "api_call"
    assert charge_entry["amountCents"] == -0.25
    assert charge_entry["metadata"]["api"] == "hunter"
    assert charge_entry["metadata"]["path"] == "/v2/domain-search"
    assert charge_entry["id"].startswith("txn_")
    assert grant_entry["type"] == "grant" and grant_entry["amountCents"] == 100
    assert body["pagination"] == {"limit": 50, "offset": 0, "count": 2}


def test_transactions_page(client_for, alice):
    account = account_for_user(user=alice.user)
    for index in range(5):
        credits_grant(account=account, amount_micros=10_000 * (index + 1), reason=f"grant {index}")
    body = (
        client_for(alice.live_key).get("/v1/credits/transactions", {"limit": 2, "offset": 2}).json()
    )
    assert [t["description"] for t in body["transactions"]] == ["grant 2", "grant 1"]
    assert body["pagination"] == {"limit": 2, "offset": 2, "count": 2}


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 201},
        {"limit": 0},
        {"limit": ""},
        {"offset": "x"},
        {"offset": ""},
        {"offset": MAX_OFFSET + 1},
    ],
)
def test_transactions_refuse_out_of_bounds_parameters(client_for, alice, params):
    response = client_for(alice.live_key).get("/v1/credits/transactions", params)
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_REQUEST"


@pytest.mark.parametrize("path", ["/v1/credits/usage", "/v1/credits/transactions"])
def test_the_largest_offset_is_an_empty_page(client_for, alice, path):
    fund(alice.user, 1_000_000)
    record_usage(account_for_user(user=alice.user), "run_alice")
    body = client_for(alice.live_key).get(path, {"offset": MAX_OFFSET}).json()
    assert body["success"] is True
    assert body["pagination"]["offset"] == MAX_OFFSET and body["pagination"]["count"] == 0


def test_an_outsider_never_sees_another_accounts_transactions(client_for, alice, charlie):
    fund(alice.user, 1_000_000)
    body = client_for(charlie.live_key).get("/v1/credits/transactions").json()
    assert body["transactions"] == []
