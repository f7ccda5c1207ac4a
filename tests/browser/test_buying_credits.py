"""Adding credits in a real browser: the page's button opens a Stripe Checkout session and the
browser lands on Stripe's page; Stripe's webhook books the credits, and the balance shows them
with the receipt.

Stripe is mocked twice, at the two places it is reached: the live server's call to Stripe's API
with `responses` (the server runs in this process), and the browser's visit to
checkout.stripe.com with Playwright's request interception, which answers a stand-in page."""

import re

import pytest
import responses
from playwright.sync_api import expect

from credits.models import Purchase
from credits.services.accounts import account_for_user
from credits.services.holds import hold_capture, hold_reserve
from tests.credits.stripe_events import (
    STRIPE_API,
    completed,
    created_session,
    deliver_live,
    refunded,
    stripe_settings,
)
from tests.factories import make_persona

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"  # the factories' password


def sign_in(page, email: str) -> None:
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {email}")).to_be_visible()


def test_a_person_goes_from_add_credits_to_stripe_checkout_and_back_to_the_credits(
    gateway, open_browser, settings
):
    stripe_settings(settings)
    buyer = make_persona("gus@example.com")
    page = open_browser("buyer")
    checkout_visits = []

    def stripe_checkout_page(route):
        checkout_visits.append(route.request.url)
        route.fulfill(
            status=200,
            content_type="text/html",
            body="<!doctype html><title>Stripe Checkout</title><h1>Pay API Gateway $10.00</h1>",
        )

    page.route("https://checkout.stripe.com/**", stripe_checkout_page)
    sign_in(page, "gus@example.com")

    with responses.RequestsMock() as stripe:
        stripe.post(f"{STRIPE_API}/v1/checkout/sessions", json=created_session("cs_test_gus"))
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Balance").click()
        page.get_by_role("link", name="Add credits").first.click()
        expect(page.get_by_role("heading", name="Pay by card")).to_be_visible()
        page.get_by_role("button", name="Add $10", exact=True).click()
        expect(page.get_by_role("heading", name="Pay API Gateway $10.00")).to_be_visible()
        sent = stripe.calls[0].request.body

    assert checkout_visits[0].startswith("https://checkout.stripe.com/c/pay/cs_test_gus")
    assert "line_items[0][price_data][unit_amount]=1000" in sent

    # Stripe confirms the payment to the gateway, then sends the person back.
    account = account_for_user(user=buyer.user)
    assert deliver_live(gateway, completed(account.pk, session_id="cs_test_gus")).status_code == 200
    page.goto("/balance?purchase=card")

    expect(page.locator('[data-figure="balance"]')).to_have_text("$10.00")
    page.get_by_role("link", name=re.compile(r"Receipt pur_\d+")).click()
    expect(page.get_by_text("cs_test_gus")).to_be_visible()
    expect(page.locator('[data-figure="amount"]')).to_have_text("$10.00")


def test_without_stripe_the_page_says_why_there_is_no_card_payment(gateway, open_browser, settings):
    settings.STRIPE_SECRET_KEY = ""
    make_persona("hal@example.com")
    page = open_browser("no-stripe")
    sign_in(page, "hal@example.com")

    page.goto("/balance/add")

    expect(page.get_by_text("Card payments are not available on this gateway")).to_be_visible()
    expect(page.get_by_role("button", name="Add $10", exact=True)).to_have_count(0)


# Each policy violation the browser sees, reported to the test.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(`${event.effectiveDirective} blocked ${event.blockedURI || "inline"}`);
});
"""


def test_the_pages_of_buying_credits_fit_a_phone_and_keep_to_the_policy(
    gateway, open_browser, settings
):
    stripe_settings(settings)
    buyer = make_persona("ida@example.com")
    account = account_for_user(user=buyer.user)
    deliver_live(gateway, completed(account.pk, session_id="cs_test_ida"))
    purchase = Purchase.objects.get()
    hold_reserve(account=account, amount_micros=4_000_000, request_id="run_ida")
    hold_capture(
        request_id="run_ida", amount_micros=4_000_000, provider_account=None, description="a call"
    )
    deliver_live(gateway, refunded(cents=1000))
    page = open_browser("phone")
    page.set_viewport_size({"width": 390, "height": 844})
    problems = []
    page.expose_binding("reportViolation", lambda source, text: problems.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    sign_in(page, "ida@example.com")

    for path in ("/balance", "/balance/add", f"/balance/purchases/{purchase.pk}"):
        response = page.goto(path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} scrolls sideways ({width} px)"

    page.goto("/balance")
    expect(page.locator('[data-figure="balance"]')).to_have_text("-$4.00")
    expect(page.get_by_role("alert")).to_contain_text("The balance is negative")
    assert problems == []
