"""What a newcomer meets first: the demo's sign-in, trial credits on sign-up, error pages and
the favicon."""

import re

import pytest
from django.conf import settings
from django.core import mail
from django.core.management import call_command
from django.test import Client

from gateway.models import User

PASSWORD_LINE = re.compile(r"dashboard: \S+/login\s+email demo@example\.com\s+password (\S+)")


def provision(capsys, *args) -> str:
    call_command("provision_demo", *args)
    return capsys.readouterr().out


def sign_in(password: str) -> Client:
    client = Client()
    response = client.post("/login", {"username": "demo@example.com", "password": password})
    assert response.status_code == 302, "the printed password did not sign in"
    return client


def test_the_demo_sign_in_is_printed_once_and_opens_its_balance_and_transactions(
    db, capsys, settings
):
    settings.GATEWAY_BASE_URL = "http://127.0.0.1:8000"
    first = provision(capsys)
    password = PASSWORD_LINE.search(first).group(1)
    assert "http://127.0.0.1:8000/login" in first

    client = sign_in(password)
    balance = client.get("/balance").content.decode()
    assert 'data-figure="balance">$10.00<' in balance
    transactions = client.get("/transactions").content.decode()
    assert "Demo credits" in transactions
    assert client.get("/usage").status_code == 200

    again = provision(capsys)
    assert PASSWORD_LINE.search(again) is None
    assert "already has its keys" in again and "password" in again


def test_rotating_renews_the_demo_password(db, capsys):
    old = PASSWORD_LINE.search(provision(capsys)).group(1)
    new = PASSWORD_LINE.search(provision(capsys, "--rotate")).group(1)

    assert new != old
    sign_in(new)
    refused = Client().post("/login", {"username": "demo@example.com", "password": old})
    assert refused.status_code == 200


def test_a_demo_user_without_a_password_gets_one_on_the_next_run(db, capsys):
    provision(capsys)
    user = User.objects.get(email="demo@example.com")
    user.set_unusable_password()
    user.save(update_fields=["password"])

    out = provision(capsys)

    sign_in(PASSWORD_LINE.search(out).group(1))
    assert "keys printed when they were created" in out


# --- Sign-up credits ------------------------------------------------------------------------------


def _sign_up(client: Client) -> None:
    """Sign up and follow the mailed confirmation link, as a newcomer does."""
    password = "plum-orbit-canyon-42"
    response = client.post(
        "/signup", {"email": "dana@example.com", "password1": password, "password2": password}
    )
    assert response["Location"] == "/signup/sent"
    (message,) = mail.outbox
    link = re.search(r"\S+/signup/confirm/\S+", message.body).group(0)
    assert client.get(link.removeprefix(settings.GATEWAY_BASE_URL))["Location"] == "/"


def test_a_sign_up_gets_no_credits_by_default(client, db):
    _sign_up(client)
    page = client.get("/balance").content.decode()
    assert 'data-figure="balance">$0.00<' in page


def test_a_sign_up_gets_the_configured_trial_credits_once(client, db, settings):
    settings.SIGNUP_CREDITS_MICROS = 1_500_000
    _sign_up(client)

    home = client.get("/").content.decode()
    page = client.get("/balance").content.decode()
    assert "ready with $1.50 of trial credits" in home
    assert 'data-figure="balance">$1.50<' in page
    assert "Sign-up credits" in client.get("/transactions").content.decode()


# --- Error pages and the favicon ------------------------------------------------------------------


def test_an_unknown_page_is_a_page_for_people_and_json_for_a_json_client(client, db):
    page = client.get("/nowhere", HTTP_ACCEPT="text/html")
    data = client.get("/nowhere", HTTP_ACCEPT="application/json")

    assert page.status_code == 404
    assert "Page not found" in page.content.decode()
    assert "URLconf" not in page.content.decode()
    assert data.status_code == 404
    assert data.json() == {"success": False, "error": "Nothing at /nowhere", "code": "NOT_FOUND"}


@pytest.fixture
def failing_page(settings):
    """A page that fails, served as the gateway serves pages."""
    settings.ROOT_URLCONF = "tests.dashboard.failing_urls"


def test_a_failure_is_a_page_that_says_so_without_details(db, failing_page):
    client = Client(raise_request_exception=False)
    page = client.get("/fails", HTTP_ACCEPT="text/html")
    data = client.get("/fails", HTTP_ACCEPT="application/json")

    assert page.status_code == 500
    assert "Something went wrong" in page.content.decode()
    assert "Traceback" not in page.content.decode()
    assert data.status_code == 500
    assert data.json()["code"] == "INTERNAL_ERROR"


def test_the_favicon_is_served(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an icon file
