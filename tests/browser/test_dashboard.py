"""The dashboard in a real browser: what a newcomer and an operator do, end to end."""

import os
import re
import subprocess

import pytest
import requests
from django.core import mail
from django.utils import timezone
from playwright.sync_api import expect

from credits.models import UsageEvent
from gateway.models import User
from tests.factories import make_persona

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "plum-orbit-canyon-42"


def api(gateway: str, method: str, path: str, key: str, **options) -> requests.Response:
    return requests.request(
        method,
        f"{gateway}{path}",
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
        **options,
    )


def sign_in(page, email: str, password: str) -> None:
    page.goto("/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text(f"Signed in as {email}")).to_be_visible()


def test_a_newcomer_signs_up_gets_credits_pays_for_a_call_and_revokes_the_key(
    gateway, open_browser
):
    page = open_browser("newcomer")

    # Sign up, then follow the mailed link: the person is signed in on their overview.
    page.goto("/")
    page.get_by_role("link", name="Create an account").click()
    page.get_by_label("Email").fill("dana@example.com")
    page.get_by_label("Password:", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation:").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    (confirmation,) = mail.outbox
    page.goto(re.search(rf"{re.escape(gateway)}/signup/confirm/\S+", confirmation.body).group(0))
    expect(page.get_by_text("Welcome! Your account is ready")).to_be_visible()

    # A live key, shown once in full, copied with its button.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Keys").click()
    page.get_by_role("link", name="Create a key").click()
    page.get_by_label("Name").fill("laptop")
    page.get_by_label("Live").check()
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_text("Copy this key now")).to_be_visible()
    secret = page.locator("#new-key-secret").input_value()
    assert secret.startswith("gw_live_")
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == secret

    # A reload does not show it again.
    page.reload()
    assert page.url == f"{gateway}/keys"
    expect(page.get_by_text("shown only once")).to_be_visible()
    assert secret not in page.content()
    expect(page.get_by_role("cell", name="laptop", exact=True)).to_be_visible()

    # The key works against the API, on an empty balance.
    balance = api(gateway, "GET", "/v1/credits/balance", secret)
    assert balance.status_code == 200, balance.text
    assert balance.json()["balance"] == "$0.00"

    # An operator grants credits from the admin: the accounts' action, then its form.
    User.objects.create_superuser(email="operator@example.com", password=PASSWORD)
    admin = open_browser("operator")
    admin.goto("/admin/")
    admin.get_by_label("Email").fill("operator@example.com")
    admin.get_by_label("Password").fill(PASSWORD)
    admin.get_by_role("button", name="Log in").click()
    admin.goto("/admin/credits/account/?q=dana%40example.com")
    admin.get_by_role("checkbox", name="Select this object for an action").check()
    admin.get_by_role("combobox", name="Action").select_option(
        label="Grant credits to the selected accounts"
    )
    admin.get_by_role("button", name="Go").click()
    expect(admin.get_by_role("heading", name="Grant credits")).to_be_visible()
    admin.get_by_label("Amount (USD)").fill("5")
    admin.get_by_label("Reason").fill("Welcome credit")
    admin.get_by_role("button", name="Grant credits").click()
    expect(admin.get_by_text("Granted $5.00 to 1 account(s).")).to_be_visible()
    assert api(gateway, "GET", "/v1/credits/balance", secret).json()["balance"] == "$5.00"

    # A paid call on a sandbox-backed endpoint: four results at $0.0025.
    run = api(
        gateway,
        "POST",
        "/v1/run",
        secret,
        json={
            "api": "hunter",
            "path": "/v2/domain-search",
            "query": {"domain": "stripe.com", "limit": 4},
        },
    )
    assert run.status_code == 200, run.text
    assert run.json()["billing"]["charged"] is True

    # The usage page lists the call, and today's bar has grown.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Usage").click()
    calls = page.get_by_role("table", name="Calls, newest first")
    expect(calls.get_by_role("row").filter(has_text="/v2/domain-search")).to_have_count(1)
    expect(calls).to_contain_text("hunter")
    expect(calls).to_contain_text("$0.01")
    # The call's day is today, unless the clock passed midnight since: then it is yesterday's bar.
    called_at = UsageEvent.objects.get(request_id=run.json()["requestId"]).created_at
    bar = page.locator(f'g.chart-bar[data-day="{timezone.localdate(called_at):%Y-%m-%d}"]')
    assert bar.get_attribute("data-calls") == "1"
    assert float(bar.locator("rect.bar").get_attribute("height")) > 0
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Balance").click()
    expect(page.locator('[data-figure="available"]')).to_have_text("$4.99")

    # Revoked in the browser, the key is refused by the API.
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Keys").click()
    page.get_by_role("link", name="Revoke laptop").click()
    page.get_by_role("button", name="Revoke the key").click()
    expect(page.get_by_text("is revoked: calls made with it are refused")).to_be_visible()
    refused = api(gateway, "GET", "/v1/credits/balance", secret)
    assert refused.status_code == 401, refused.text


def test_the_catalog_finds_an_endpoint_by_its_purpose_and_gives_code_that_runs(
    gateway, open_browser
):
    persona = make_persona("erin@example.com")
    page = open_browser("erin")
    sign_in(page, "erin@example.com", "correct horse battery staple")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Catalog").click()
    expect(page.get_by_role("table", name="APIs in the catalog")).to_contain_text("ScreenshotOne")
    page.get_by_role("searchbox", name="Describe what you need").fill(
        "take a screenshot of a web page"
    )
    page.get_by_role("button", name="Search").click()

    best = page.locator("section.result").first
    expect(best.get_by_role("heading")).to_contain_text("ScreenshotOne")
    expect(best.get_by_role("row").nth(1)).to_contain_text("GET /take")
    best.get_by_role("link", name="GET /take").click()

    expect(page.get_by_role("heading", level=1)).to_contain_text("GET /take")
    url = page.get_by_role("table", name="Query parameters").get_by_role("row", name="url string")
    expect(url).to_contain_text("URL of the page to capture")
    for title in (
        "JavaScript, with the gateway SDK",
        "Python, POST /v1/run with requests",
        "curl",
        "JavaScript, paying with @x402/fetch",
        "Python, paying with x402",
    ):
        expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
    page.get_by_role("button", name="Copy the curl snippet").click()
    expect(page.get_by_role("button", name="Copy the curl snippet")).to_have_text("Copied")
    snippet = page.evaluate("navigator.clipboard.readText()")
    assert snippet == page.locator("#snippet-curl").text_content()

    # The snippet as copied calls the gateway, here with a test key (the free sandbox).
    ran = subprocess.run(
        ["bash", "-c", snippet],
        env={**os.environ, "GATEWAY_API_KEY": persona.test_key, "GATEWAY_BASE_URL": gateway},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert ran.returncode == 0, ran.stderr
    assert '"success":true' in ran.stdout.replace(" ", "")


def test_without_javascript_the_snippets_are_there_to_select_and_no_copy_button_shows(
    gateway, open_browser
):
    make_persona("erin@example.com")
    page = open_browser("erin", javascript=False)
    sign_in(page, "erin@example.com", "correct horse battery staple")

    page.goto("/catalog")
    page.get_by_role("searchbox", name="Describe what you need").fill(
        "take a screenshot of a web page"
    )
    page.get_by_role("button", name="Search").click()
    page.locator("section.result").first.get_by_role("link", name="GET /take").click()

    expect(page.get_by_role("heading", name="curl", exact=True)).to_be_visible()
    expect(page.locator("#snippet-curl")).to_contain_text("/v1/run")
    expect(page.get_by_role("button", name="Copy the curl snippet")).to_be_hidden()
