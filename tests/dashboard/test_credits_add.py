"""The "Add credits" page opens a Stripe Checkout session (Stripe's API mocked at the HTTP
level) and sends the person there; the balance page lists purchases with their receipts."""

from urllib.parse import parse_qs

import pytest
import responses
from django.test import Client

from credits.models import Purchase
from credits.services.accounts import account_for_organization, account_for_user
from credits.services.holds import hold_capture, hold_reserve
from credits.services.purchases import purchase_book, purchase_refund
from tests.credits.stripe_events import STRIPE_API, created_session, stripe_settings

SESSIONS = f"{STRIPE_API}/v1/checkout/sessions"


@pytest.fixture
def stripe(settings):
    stripe_settings(settings)
    settings.GATEWAY_BASE_URL = "https://gateway.example.com"
    with responses.RequestsMock() as mock:
        yield mock


def sent_to_stripe(mock) -> dict:
    """The form Stripe's API received, as one flat dict."""
    return {name: values[0] for name, values in parse_qs(mock.calls[0].request.body).items()}


def bought(account, *, cents=1000, reference="cs_test_1", method="card") -> Purchase:
    return purchase_book(
        account_id=account.pk,
        method=method,
        reference=reference,
        amount_micros=cents * 10_000,
        description="Credits bought",
        payment_reference="pi_test_1",
    )


def test_a_preset_amount_opens_a_checkout_session_and_sends_the_person_there(
    stripe, browser_for, alice
):
    stripe.post(SESSIONS, json=created_session("cs_test_preset"))

    response = browser_for(alice).post("/balance/add", {"amount": "10"})

    assert response.status_code == 303
    assert response["Location"].startswith("https://checkout.stripe.com/c/pay/cs_test_preset")
    form = sent_to_stripe(stripe)
    account = account_for_user(user=alice.user)
    assert form["mode"] == "payment"
    assert form["line_items[0][price_data][unit_amount]"] == "1000"
    assert form["line_items[0][price_data][currency]"] == "usd"
    assert form["client_reference_id"] == str(account.pk)
    assert form["metadata[purpose]"] == "gateway-credits"
    assert form["payment_intent_data[metadata][account]"] == str(account.pk)
    assert form["customer_email"] == "alice@example.com"
    assert form["success_url"] == "https://gateway.example.com/balance?purchase=card"
    assert form["cancel_url"] == "https://gateway.example.com/balance/add?cancelled=1"
    auth = stripe.calls[0].request.headers["Authorization"]
    assert auth == "Bearer sk_test_credits_0123456789abcdef"
    assert not Purchase.objects.exists()  # only Stripe's signed event books it


def test_a_custom_amount_in_cents_is_sold_as_asked(stripe, browser_for, alice):
    stripe.post(SESSIONS, json=created_session())

    response = browser_for(alice).post("/balance/add", {"amount": "12.34"})

    assert response.status_code == 303
    assert sent_to_stripe(stripe)["line_items[0][price_data][unit_amount]"] == "1234"


@pytest.mark.parametrize("amount", ["4.99", "1000.01", "12.345", "ten", ""])
def test_an_amount_out_of_bounds_is_refused_without_asking_stripe(
    stripe, browser_for, alice, amount
):
    response = browser_for(alice).post("/balance/add", {"amount": amount})

    assert response.status_code == 200
    assert response.context["form"].errors["amount"]
    assert len(stripe.calls) == 0


def test_an_owner_buys_for_the_organization_and_comes_back_to_it(stripe, browser_for, alice):
    stripe.post(SESSIONS, json=created_session())

    response = browser_for(alice).post("/balance/add?account=org:acme", {"amount": "25"})

    assert response.status_code == 303
    form = sent_to_stripe(stripe)
    organization = account_for_organization(organization=alice.organization)
    assert form["client_reference_id"] == str(organization.pk)
    assert form["success_url"].endswith("/balance?purchase=card&account=org%3Aacme")


def test_a_member_who_is_not_an_owner_cannot_buy_for_the_organization(stripe, browser_for, bob):
    page = browser_for(bob).get("/balance/add?account=org:acme")
    posted = browser_for(bob).post("/balance/add?account=org:acme", {"amount": "10"})

    assert "Only owners of" in page.content.decode()
    assert 'name="amount"' not in page.content.decode()
    assert posted.status_code == 403
    assert len(stripe.calls) == 0


def test_an_outsider_cannot_buy_for_someone_elses_organization(stripe, browser_for, charlie):
    response = browser_for(charlie).post("/balance/add?account=org:acme", {"amount": "10"})

    assert response.status_code == 404
    assert len(stripe.calls) == 0


def test_a_visitor_is_sent_to_sign_in(db):
    response = Client().get("/balance/add")

    assert response.status_code == 302 and response["Location"].startswith("/login")


def test_when_stripe_fails_the_page_says_so_and_nothing_is_charged(stripe, browser_for, alice):
    stripe.post(SESSIONS, status=401, json={"error": {"message": "Invalid API Key provided"}})

    response = browser_for(alice).post("/balance/add", {"amount": "10"})

    assert response.status_code == 200
    assert "The card payment could not be started" in response.content.decode()
    assert "Invalid API Key provided" in response.content.decode()


def test_without_stripe_settings_the_card_option_is_hidden_and_the_page_says_why(
    browser_for, alice, settings
):
    settings.STRIPE_SECRET_KEY = ""
    settings.STRIPE_WEBHOOK_SECRET = "whsec_set"

    with responses.RequestsMock() as mock:
        page = browser_for(alice).get("/balance/add")
        posted = browser_for(alice).post("/balance/add", {"amount": "10"})

    html = page.content.decode()
    assert "Card payments are not available on this gateway" in html
    assert "STRIPE_SECRET_KEY" in html and "STRIPE_WEBHOOK_SECRET" not in html
    assert "Pay by card</button>" not in html and 'name="amount"' not in html
    assert "/rails/x402/credits/purchase" in html  # USDC is still offered
    assert posted.status_code == 200 and len(mock.calls) == 0


def test_the_page_offers_the_presets_and_usdc(stripe, browser_for, alice):
    html = browser_for(alice).get("/balance/add").content.decode()

    for preset in ("10", "25", "100"):
        assert f"Add ${preset}</button>" in html
    assert "$5.00 to $1000.00" in html
    assert "/rails/x402/credits/purchase" in html


def test_the_balance_page_lists_purchases_with_their_receipts(browser_for, alice, charlie):
    account = account_for_user(user=alice.user)
    purchase = bought(account)

    balance = browser_for(alice).get("/balance").content.decode()
    receipt = browser_for(alice).get(f"/balance/purchases/{purchase.pk}")
    elsewhere = browser_for(charlie).get(f"/balance/purchases/{purchase.pk}")

    assert f'href="/balance/purchases/{purchase.pk}"' in balance
    assert f"Receipt {purchase.public_id}" in balance
    assert 'href="/balance/add"' in balance
    assert receipt.status_code == 200
    assert "pi_test_1" in receipt.content.decode() and "cs_test_1" in receipt.content.decode()
    assert 'data-figure="amount">$10.00' in receipt.content.decode()
    assert elsewhere.status_code == 404


def test_a_member_sees_the_organizations_purchase_receipts(browser_for, alice, bob, charlie):
    purchase = bought(account_for_organization(organization=alice.organization))

    assert browser_for(bob).get(f"/balance/purchases/{purchase.pk}").status_code == 200
    assert browser_for(charlie).get(f"/balance/purchases/{purchase.pk}").status_code == 404
    org_page = browser_for(bob).get("/balance?account=org:acme").content.decode()
    assert f"Receipt {purchase.public_id}" in org_page
    assert f"Receipt {purchase.public_id}" not in browser_for(bob).get("/balance").content.decode()


def test_a_refunded_purchase_after_spending_shows_a_negative_balance_and_why(browser_for, alice):
    account = account_for_user(user=alice.user)
    purchase = bought(account)
    hold_reserve(account=account, amount_micros=6_000_000, request_id="run_spent")
    hold_capture(
        request_id="run_spent", amount_micros=6_000_000, provider_account=None, description="a call"
    )
    purchase_refund(purchase=purchase, refunded_micros=10_000_000, reason="Card refund of pur_1")

    html = browser_for(alice).get("/balance").content.decode()
    receipt = browser_for(alice).get(f"/balance/purchases/{purchase.pk}").content.decode()

    assert 'data-figure="balance">-$6.00' in html
    assert 'data-notice="negative-balance"' in html
    assert "Paid calls are refused until credits are added" in html
    assert 'data-figure="refunded">$10.00' in receipt


def test_coming_back_from_stripe_says_the_credits_are_on_their_way(browser_for, alice):
    html = browser_for(alice).get("/balance?purchase=card").content.decode()

    assert 'data-notice="card-payment"' in html
