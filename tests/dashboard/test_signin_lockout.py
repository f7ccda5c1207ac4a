"""Password guessing: a (email address, client address) pair is paused after repeated failures."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.test import Client

PASSWORD = "correct horse battery staple"
NEW = "violet-harbour-trumpet-7"


@pytest.fixture(autouse=True)
def three_failures(settings):
    settings.AXES_FAILURE_LIMIT = 3


def sign_in(client, email, password, address="203.0.113.7"):
    return client.post("/login", {"username": email, "password": password}, REMOTE_ADDR=address)


def fail(client, email, times, address="203.0.113.7"):
    for _ in range(times):
        assert sign_in(client, email, "guess", address).status_code == 200


def test_failures_below_the_limit_still_allow_the_right_password(client, alice):
    fail(client, "alice@example.com", 2)

    assert sign_in(client, "alice@example.com", PASSWORD).status_code == 302


def test_at_the_limit_even_the_right_password_is_refused_with_a_page_that_says_why(client, alice):
    fail(client, "alice@example.com", 2)

    third = sign_in(client, "alice@example.com", "guess")
    after = sign_in(client, "alice@example.com", PASSWORD)

    for response in (third, after):
        assert response.status_code == 429
        page = response.content.decode()
        assert "Too many sign-in attempts" in page
        assert "alice@example.com" in page
        assert "paused for 15 minutes" in page
        assert 'href="/password/reset"' in page
    assert "_auth_user_id" not in client.session


def test_changing_the_case_of_the_address_does_not_get_round_the_count(client, alice):
    fail(client, "alice@example.com", 1)
    fail(client, "ALICE@example.com", 1)

    assert sign_in(client, " Alice@Example.COM", "guess").status_code == 429
    assert sign_in(client, "alice@example.com", PASSWORD).status_code == 429


def lock(client, email):
    fail(client, email, 2)
    assert sign_in(client, email, "guess").status_code == 429


def test_the_lock_holds_one_address_from_one_client_only(client, alice, bob):
    lock(client, "alice@example.com")

    assert sign_in(Client(), "alice@example.com", PASSWORD, "198.51.100.4").status_code == 302
    assert sign_in(Client(), "bob@example.com", PASSWORD).status_code == 302
    assert sign_in(Client(), "alice@example.com", PASSWORD).status_code == 429


def test_a_successful_sign_in_starts_the_count_again(client, alice):
    fail(client, "alice@example.com", 2)
    assert sign_in(client, "alice@example.com", PASSWORD).status_code == 302
    client.logout()

    fail(client, "alice@example.com", 2)

    assert sign_in(client, "alice@example.com", PASSWORD).status_code == 302


def test_the_lock_ends_after_the_cool_off(client, alice, settings):
    lock(client, "alice@example.com")
    settings.AXES_COOLOFF_TIME = timedelta(seconds=0)

    assert sign_in(client, "alice@example.com", PASSWORD).status_code == 302


def test_a_password_reset_by_email_lifts_the_lock(client, alice):
    lock(client, "alice@example.com")
    assert sign_in(client, "alice@example.com", PASSWORD).status_code == 429

    client.post("/password/reset", {"email": "alice@example.com"})
    link = re.search(r"https?://\S+?(/password/reset/\S+)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})

    assert sign_in(client, "alice@example.com", NEW).status_code == 302


def test_the_admin_sign_in_is_guarded_too(client, alice):
    alice.user.is_staff = True
    alice.user.save(update_fields=["is_staff"])
    for _ in range(3):
        client.post(
            "/admin/login/",
            {"username": "alice@example.com", "password": "guess"},
            REMOTE_ADDR="203.0.113.7",
        )

    response = client.post(
        "/admin/login/",
        {"username": "alice@example.com", "password": PASSWORD},
        REMOTE_ADDR="203.0.113.7",
    )

    assert response.status_code == 429
