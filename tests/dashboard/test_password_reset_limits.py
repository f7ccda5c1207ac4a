"""Reset emails have a ceiling per address and per client address, so the form floods nobody."""

import pytest
from django.core import mail


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.PASSWORD_RESET_EMAILS_PER_ADDRESS_PER_HOUR = 2
    settings.PASSWORD_RESET_EMAILS_PER_CLIENT_PER_HOUR = 4


def ask(client, email, address="203.0.113.7"):
    return client.post("/password/reset", {"email": email}, REMOTE_ADDR=address)


def test_an_address_gets_its_emails_up_to_the_limit_then_a_clear_refusal(client, alice):
    assert [ask(client, "alice@example.com").status_code for _ in range(2)] == [302, 302]

    refused = ask(client, "Alice@Example.com")

    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Too many reset emails were asked for" in page
    assert "try again in" in page
    assert len(mail.outbox) == 2


def test_an_unknown_address_is_refused_the_same_way_so_nothing_is_revealed(client, db):
    assert [ask(client, "nobody@example.com").status_code for _ in range(3)] == [302, 302, 429]
    assert mail.outbox == []


def test_one_client_cannot_send_resets_to_many_addresses(client, alice, bob, charlie):
    statuses = [
        ask(client, email).status_code
        for email in ("alice@example.com", "bob@example.com", "charlie@example.com", "x@y.io")
    ]
    assert statuses == [302, 302, 302, 302]

    assert ask(client, "alice@example.com").status_code == 429
    assert ask(client, "bob@example.com", address="198.51.100.4").status_code == 302
    assert [message.to for message in mail.outbox] == [
        ["alice@example.com"],
        ["bob@example.com"],
        ["charlie@example.com"],
        ["bob@example.com"],
    ]
