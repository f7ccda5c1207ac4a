"""POST /webhooks/stripe: Stripe's signed events book card purchases once each, however often and
in whatever order they are delivered, and refunds and disputes take them back."""

import pytest
import responses
from django.core.management import call_command
from django.test import Client

from credits.models import Account, LedgerEntry, Purchase
from credits.services.accounts import account_for_organization, account_for_user
from credits.services.holds import hold_capture, hold_reserve
from tests.credits.stripe_events import (
    STRIPE_API,
    completed,
    deliver,
    disputed,
    event,
    refunded,
    session,
    signed,
    stripe_settings,
)


@pytest.fixture
def stripe(settings):
    stripe_settings(settings)
    with responses.RequestsMock() as mock:  # nothing reaches Stripe unless a test says so
        yield mock


@pytest.fixture
def webhook():
    return Client()


def balance(account) -> int:
    return Account.objects.with_balance().get(pk=account.pk).balance_micros


def test_a_paid_session_delivered_again_and_again_books_one_purchase(stripe, webhook, alice):
    account = account_for_user(user=alice.user)
    paid = completed(account.pk)

    answers = [deliver(webhook, paid) for _ in range(3)]
    answers.append(deliver(webhook, completed(account.pk)))  # another event, the same session
    answers.append(
        deliver(webhook, event("checkout.session.async_payment_succeeded", paid["data"]["object"]))
    )

    assert [answer.status_code for answer in answers] == [200] * 5
    purchase = Purchase.objects.get()
    assert (purchase.account, purchase.method, purchase.amount_micros) == (
        account,
        "card",
        10_000_000,
    )
    assert (purchase.reference, purchase.payment_reference) == ("cs_test_a1", "pi_test_1")
    assert answers[0].json()["outcome"] == f"purchase {purchase.public_id} booked"
    assert balance(account) == 10_000_000
    assert LedgerEntry.objects.filter(type="purchase").count() == 2
    call_command("check_ledger")


def test_the_transactions_list_the_purchase_with_its_payment_reference(
    stripe, webhook, alice, client_for
):
    deliver(webhook, completed(account_for_user(user=alice.user).pk))

    transactions = client_for(alice.live_key).get("/v1/credits/transactions").json()
    purchase = transactions["transactions"][0]

    assert (purchase["type"], purchase["amountCents"]) == ("purchase", 1000)
    assert purchase["metadata"]["paymentIntent"] == "pi_test_1"
    assert purchase["metadata"]["checkoutSession"] == "cs_test_a1"
    assert purchase["metadata"]["purchaseId"] == Purchase.objects.get().public_id


def test_a_slow_payment_is_booked_when_it_succeeds_not_when_the_session_completes(
    stripe, webhook, alice
):
    account = account_for_user(user=alice.user)
    waiting = completed(account.pk, payment_status="unpaid")

    first = deliver(webhook, waiting)
    assert first.json()["outcome"] == "ignored: not paid yet"
    assert not Purchase.objects.exists()

    succeeded = session(account.pk, payment_status="paid")
    deliver(webhook, event("checkout.session.async_payment_succeeded", succeeded))
    deliver(webhook, event("checkout.session.async_payment_failed", succeeded))

    assert balance(account) == 10_000_000


def test_an_organization_session_credits_the_organization(stripe, webhook, alice):
    organization = account_for_organization(organization=alice.organization)

    deliver(webhook, completed(organization.pk, cents=2500))

    assert balance(organization) == 25_000_000
    assert balance(account_for_user(user=alice.user)) == 0


def test_a_refund_after_spending_takes_the_balance_negative_and_paid_calls_are_refused(
    stripe, webhook, alice, client_for
):
    account = account_for_user(user=alice.user)
    deliver(webhook, completed(account.pk))
    hold_reserve(account=account, amount_micros=7_000_000, request_id="run_spent")
    hold_capture(
        request_id="run_spent", amount_micros=7_000_000, provider_account=None, description="a call"
    )

    answer = deliver(webhook, refunded(cents=1000))

    assert answer.json()["outcome"] == "refund booked"
    assert balance(account) == -7_000_000
    api = client_for(alice.live_key)
    assert api.get("/v1/credits/balance").json()["balance"] == "-$7.00"
    check = api.post("/v1/credits/check", {"amountCents": 1}, format="json").json()
    assert check["sufficient"] is False and check["shortfallCents"] == 701
    call_command("check_ledger")


def test_partial_refunds_and_a_dispute_take_back_the_purchase_once_each(stripe, webhook, alice):
    account = account_for_user(user=alice.user)
    deliver(webhook, completed(account.pk))

    deliver(webhook, refunded(cents=300))
    deliver(webhook, refunded(cents=300))  # the same refund, delivered again
    deliver(webhook, refunded(cents=500))
    deliver(webhook, disputed(cents=1000))
    deliver(webhook, disputed(cents=1000))

    purchase = Purchase.objects.get()
    assert (purchase.refunded_micros, purchase.disputed_micros) == (5_000_000, 5_000_000)
    reversals = LedgerEntry.objects.filter(account=account, type="refund").order_by("pk")
    assert [entry.amount_micros for entry in reversals] == [-3_000_000, -2_000_000, -5_000_000]
    assert reversals.last().metadata["dispute"] == "dp_1"
    assert balance(account) == 0
    call_command("check_ledger")


def test_a_refund_delivered_before_its_session_books_the_purchase_first(stripe, webhook, alice):
    account = account_for_user(user=alice.user)
    stripe.get(
        f"{STRIPE_API}/v1/checkout/sessions",
        match=[
            responses.matchers.query_param_matcher({"payment_intent": "pi_test_1", "limit": "1"})
        ],
        json={"object": "list", "data": [session(account.pk)], "has_more": False},
    )

    early = deliver(webhook, refunded(cents=1000))
    late = deliver(webhook, completed(account.pk))

    assert (early.status_code, late.status_code) == (200, 200)
    assert early.json()["outcome"] == "refund booked"
    assert Purchase.objects.count() == 1
    assert sorted(LedgerEntry.objects.filter(account=account).values_list("type", flat=True)) == [
        "purchase",
        "refund",
    ]
    assert balance(account) == 0
    assert (
        stripe.calls[0].request.headers["Authorization"]
        == "Bearer sk_test_credits_0123456789abcdef"
    )
    call_command("check_ledger")


def test_a_refund_of_another_products_payment_is_ignored(stripe, webhook, alice):
    stripe.get(
        f"{STRIPE_API}/v1/checkout/sessions",
        json={"object": "list", "data": [], "has_more": False},
    )

    answer = deliver(webhook, refunded(cents=1000, payment_intent="pi_of_a_t_shirt"))

    assert answer.status_code == 200
    assert answer.json()["outcome"] == "ignored: not a purchase of credits"
    assert not LedgerEntry.objects.exists()


def test_a_session_of_another_product_books_nothing(stripe, webhook, alice):
    answer = deliver(webhook, completed(account_for_user(user=alice.user).pk, purpose="t-shirts"))

    assert answer.json()["outcome"] == "ignored: not a session of this gateway"
    assert not Purchase.objects.exists()


def test_when_stripe_cannot_be_asked_the_event_is_refused_so_that_stripe_sends_it_again(
    stripe, webhook, alice
):
    stripe.get(
        f"{STRIPE_API}/v1/checkout/sessions", status=500, json={"error": {"message": "down"}}
    )

    answer = deliver(webhook, refunded(cents=1000))

    assert answer.status_code == 503
    assert answer.json()["code"] == "PAYMENT_UNAVAILABLE"
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize(
    "signing",
    [
        {"secret": "whsec_someone_else"},
        {"at": 1_000_000_000},  # a delivery recorded long ago, replayed
    ],
    ids=["another-secret", "too-old"],
)
def test_a_delivery_not_signed_by_stripe_now_is_refused(stripe, webhook, alice, signing):
    answer = deliver(webhook, completed(account_for_user(user=alice.user).pk), **signing)

    assert answer.status_code == 400
    assert answer.json()["code"] == "INVALID_REQUEST"
    assert "signature" in answer.json()["error"]
    assert not Purchase.objects.exists()


def test_a_tampered_or_unsigned_body_is_refused(stripe, webhook, alice):
    account = account_for_user(user=alice.user)
    body, signature = signed(completed(account.pk, cents=500))
    tampered = body.replace(b'"amount_total": 500', b'"amount_total": 50000')

    forged = webhook.post(
        "/webhooks/stripe",
        tampered,
        content_type="application/json",
        headers={"Stripe-Signature": signature},
    )
    unsigned = webhook.post("/webhooks/stripe", body, content_type="application/json")

    assert (forged.status_code, unsigned.status_code) == (400, 400)
    assert not Purchase.objects.exists()


def test_the_webhook_is_off_without_the_stripe_settings(webhook, alice, settings):
    settings.STRIPE_SECRET_KEY = settings.STRIPE_WEBHOOK_SECRET = ""

    answer = deliver(webhook, completed(account_for_user(user=alice.user).pk))

    assert answer.status_code == 404
    assert not Purchase.objects.exists()


def test_a_session_naming_no_account_is_refused_rather_than_dropped(stripe, webhook, db):
    paid = completed(0)
    paid["data"]["object"]["client_reference_id"] = None

    answer = deliver(webhook, paid)

    assert answer.status_code == 400
    assert "names no account" in answer.json()["error"]
