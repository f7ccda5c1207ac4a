"""The reset mail's link leads to the configured public address, whatever Host the request named."""

import re

from django.core import mail


def reset_link(client, **headers) -> str:
    response = client.post(
        "/password/reset", {"email": "alice@example.com"}, REMOTE_ADDR="203.0.113.9", **headers
    )
    assert response.status_code == 302
    (message,) = mail.outbox
    return re.search(r"\S+/password/reset/\S+", message.body).group(0)


def test_a_reset_asked_with_a_forged_host_mails_a_link_on_the_gateway_base_url(
    client, alice, settings
):
    settings.ALLOWED_HOSTS = ["*"]
    settings.GATEWAY_BASE_URL = "https://gateway.example.com"

    link = reset_link(client, HTTP_HOST="evil.example")

    assert link.startswith("https://gateway.example.com/password/reset/")
    assert "evil.example" not in mail.outbox[0].body


def test_a_forwarded_host_is_ignored_too(client, alice, settings):
    settings.ALLOWED_HOSTS = ["*"]
    settings.USE_X_FORWARDED_HOST = True
    settings.GATEWAY_BASE_URL = "http://127.0.0.1:8000"

    link = reset_link(client, HTTP_X_FORWARDED_HOST="evil.example", HTTP_HOST="evil.example")

    assert link.startswith("http://127.0.0.1:8000/password/reset/")


def test_the_mailed_link_sets_a_new_password(client, alice, settings):
    settings.GATEWAY_BASE_URL = "https://gateway.example.com"
    path = reset_link(client).removeprefix("https://gateway.example.com")

    form = client.get(path, follow=True)
    response = client.post(
        form.redirect_chain[-1][0],
        {
            "new_password1": "a fresh long passphrase 42",
            "new_password2": "a fresh long passphrase 42",
        },
    )

    assert response.status_code == 302
    alice.user.refresh_from_db()
    assert alice.user.check_password("a fresh long passphrase 42")
