"""Sign-up emails have a ceiling per address and per client address, like reset emails, so the
form floods no mailbox; an address with an account meets the same ceiling, so it tells nothing."""

import pytest
from django.core import mail

STRONG = "plum-orbit-canyon-42"


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.SIGNUP_EMAILS_PER_ADDRESS_PER_HOUR = 2
    settings.SIGNUP_EMAILS_PER_CLIENT_PER_HOUR = 4


def ask(client, email, address="203.0.113.7"):
    return client.post(
        "/signup", {"email": email, "password1": STRONG, "password2": STRONG}, REMOTE_ADDR=address
    )


def test_an_address_gets_its_emails_up_to_the_limit_then_a_clear_refusal(client, db):
    assert [ask(client, "dana@example.com").status_code for _ in range(2)] == [302, 302]

    refused = ask(client, "Dana@Example.com")

    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Too many sign-up emails were asked for" in page
    assert "try again in" in page
    assert len(mail.outbox) == 2


def test_an_address_with_an_account_is_refused_the_same_way_so_nothing_is_revealed(client, alice):
    assert [ask(client, "alice@example.com").status_code for _ in range(3)] == [302, 302, 429]
    assert [message.subject for message in mail.outbox] == [
        "You already have an API Gateway account"
    ] * 2


def test_one_client_cannot_send_sign_up_emails_to_many_addresses(client, alice):
    statuses = [
        ask(client, email).status_code
        for email in ("a@example.com", "b@example.com", "alice@example.com", "c@example.com")
    ]
    assert statuses == [302, 302, 302, 302]

    assert ask(client, "d@example.com").status_code == 429
    assert ask(client, "d@example.com", address="198.51.100.4").status_code == 302
    assert [message.to for message in mail.outbox] == [
        ["a@example.com"],
        ["b@example.com"],
        ["alice@example.com"],
        ["c@example.com"],
        ["d@example.com"],
    ]


def test_sign_up_emails_do_not_spend_the_password_reset_allowance(client, alice, settings):
    settings.PASSWORD_RESET_EMAILS_PER_ADDRESS_PER_HOUR = 1
    ask(client, "alice@example.com")
    ask(client, "alice@example.com")

    reset = client.post(
        "/password/reset", {"email": "alice@example.com"}, REMOTE_ADDR="203.0.113.7"
    )

    assert reset.status_code == 302
    assert len(mail.outbox) == 3
