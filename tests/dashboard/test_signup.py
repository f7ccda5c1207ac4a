"""Sign-up by email confirmation: the page answers the same whether or not the address has an
account, the mail says which, and the mailed link opens the account once."""

import re
import time
from types import SimpleNamespace

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core import mail, signing

from dashboard.models import PendingSignUp
from gateway.models import User

SIGNUP = "/signup"
STRONG = "plum-orbit-canyon-42"
BASE_URL = "https://gateway.example.com"


@pytest.fixture(autouse=True)
def _public_address(settings):
    settings.GATEWAY_BASE_URL = BASE_URL


def sign_up(client, email, password=STRONG, confirmation=None, **headers):
    return client.post(
        SIGNUP,
        {"email": email, "password1": password, "password2": confirmation or password},
        **headers,
    )


def link_in(message) -> str:
    """The path of the confirmation link in a mail, which must lead to GATEWAY_BASE_URL."""
    link = re.search(r"\S+/signup/confirm/\S+", message.body).group(0)
    assert link.startswith(f"{BASE_URL}/signup/confirm/")
    return link.removeprefix(BASE_URL)


def test_a_new_address_is_mailed_a_link_and_no_account_exists_before_it_is_followed(client, db):
    response = sign_up(client, "Dana@Example.com")

    assert response.status_code == 302
    assert response["Location"] == "/signup/sent"
    assert "Check your email" in client.get("/signup/sent").content.decode()
    assert not User.objects.exists()
    assert "_auth_user_id" not in client.session
    (message,) = mail.outbox
    assert message.to == ["dana@example.com"]
    assert message.subject == "Confirm your API Gateway account"
    assert "works once, for 3 days" in message.body
    link_in(message)


def test_following_the_link_opens_the_account_and_signs_the_person_in(client, db):
    sign_up(client, "Dana@Example.com")

    response = client.get(link_in(mail.outbox[0]))

    assert response.status_code == 302
    assert response["Location"] == "/"
    user = User.objects.get()
    assert user.email == "dana@example.com"
    assert user.is_active
    assert user.check_password(STRONG)
    home = client.get("/")
    assert home.context["user"] == user
    page = home.content.decode()
    assert "Welcome! Your account is ready: create a key to start." in page
    assert "Signed in as dana@example.com" in page
    assert not PendingSignUp.objects.exists()


def test_the_link_can_be_followed_in_another_browser(client, db):
    sign_up(client, "dana@example.com")
    phone = type(client)()

    assert phone.get(link_in(mail.outbox[0]))["Location"] == "/"
    assert phone.get("/").context["user"].email == "dana@example.com"


def test_the_new_person_can_sign_in_again_with_their_password(client, db):
    sign_up(client, "dana@example.com")
    client.get(link_in(mail.outbox[0]))
    client.post("/logout")

    response = client.post("/login", {"username": "dana@example.com", "password": STRONG})

    assert response.status_code == 302


def test_an_address_with_an_account_gets_the_same_answer_and_a_mail_saying_so(client, alice):
    newcomer = sign_up(type(client)(), "dana@example.com")
    existing = sign_up(client, "ALICE@example.com")

    assert (existing.status_code, existing["Location"]) == (302, "/signup/sent")
    assert (newcomer.status_code, newcomer["Location"]) == (302, "/signup/sent")
    assert "_auth_user_id" not in client.session
    assert User.objects.filter(email__iexact="alice@example.com").count() == 1
    alice.user.refresh_from_db()
    assert alice.user.check_password("correct horse battery staple")
    assert not PendingSignUp.objects.filter(email="alice@example.com").exists()
    message = mail.outbox[1]
    assert message.to == ["alice@example.com"]
    assert message.subject == "You already have an API Gateway account"
    assert f"{BASE_URL}/login" in message.body
    assert f"{BASE_URL}/password/reset" in message.body
    assert "/signup/confirm/" not in message.body


def test_both_kinds_of_address_hash_the_password_so_neither_answers_sooner(client, alice, settings):
    settings.PASSWORD_HASHERS = ["tests.dashboard.test_signup.CountingHasher"]

    CountingHasher.calls = 0
    sign_up(client, "dana@example.com")
    for_a_new_address = CountingHasher.calls
    CountingHasher.calls = 0
    sign_up(client, "alice@example.com")
    for_an_address_with_an_account = CountingHasher.calls

    assert for_a_new_address == for_an_address_with_an_account == 1
    assert len(mail.outbox) == 2


class CountingHasher(PBKDF2PasswordHasher):
    """The default hasher, counting the passwords it hashes."""

    calls = 0

    def encode(self, password, salt, iterations=None):
        type(self).calls += 1
        return super().encode(password, salt, iterations)


def test_a_mail_scanner_checking_the_link_with_head_does_not_use_it_up(client, db):
    sign_up(client, "dana@example.com")
    path = link_in(mail.outbox[0])

    assert client.head(path).status_code == 405
    assert not User.objects.exists()
    assert client.get(path)["Location"] == "/"


def test_the_link_works_once(client, db):
    sign_up(client, "dana@example.com")
    path = link_in(mail.outbox[0])
    client.get(path)
    client.post("/logout")

    again = client.get(path, follow=True)

    assert again.redirect_chain[0] == ("/login", 302)
    assert "This address is confirmed already: sign in." in again.content.decode()
    assert "_auth_user_id" not in client.session
    assert User.objects.count() == 1


def test_signing_up_again_mails_a_fresh_link_and_only_the_newest_works(client, db):
    sign_up(client, "dana@example.com")
    sign_up(client, "dana@example.com", "another-plum-orbit-77")
    first, second = (link_in(message) for message in mail.outbox)

    refused = client.get(first, follow=True)

    assert refused.redirect_chain[0] == ("/signup", 302)
    assert "replaced by a newer one" in refused.content.decode()
    assert not User.objects.exists()
    assert client.get(second)["Location"] == "/"
    assert User.objects.get().check_password("another-plum-orbit-77")


def test_a_link_past_three_days_is_refused(client, db, monkeypatch):
    sign_up(client, "dana@example.com")
    later = time.time() + 3 * 24 * 3600 + 60
    monkeypatch.setattr(signing, "time", SimpleNamespace(time=lambda: later))

    refused = client.get(link_in(mail.outbox[0]), follow=True)

    assert refused.redirect_chain[0] == ("/signup", 302)
    assert "This confirmation link has expired" in refused.content.decode()
    assert not User.objects.exists()


def test_a_link_for_another_address_cannot_be_forged(client, db):
    sign_up(client, "dana@example.com")
    token = link_in(mail.outbox[0]).removeprefix("/signup/confirm/")
    value, _, signature = token.partition(":")
    forged = signing.b64_encode(b'{"email":"eve@example.com","nonce":"x"}').decode()

    for path in (f"/signup/confirm/{forged}:{signature}", f"/signup/confirm/{value}x"):
        refused = client.get(path, follow=True)
        assert "This confirmation link is not valid" in refused.content.decode()
    assert not User.objects.exists()


def test_a_link_opens_nothing_when_the_address_got_an_account_another_way(client, db):
    sign_up(client, "dana@example.com")
    User.objects.create_user(email="dana@example.com", password="made-by-an-operator-1")

    refused = client.get(link_in(mail.outbox[0]), follow=True)

    assert refused.redirect_chain[0] == ("/login", 302)
    assert "_auth_user_id" not in client.session
    assert User.objects.get().check_password("made-by-an-operator-1")
    assert not PendingSignUp.objects.exists()


def test_an_unconfirmed_address_cannot_sign_in_and_is_told_to_follow_the_link(client, db):
    sign_up(client, "dana@example.com")

    response = client.post("/login", {"username": "dana@example.com", "password": STRONG})

    assert response.status_code == 200
    assert "Follow the link in the confirmation email first" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_mailed_links_lead_to_the_public_address_whatever_host_was_named(
    client, alice, settings
):
    settings.ALLOWED_HOSTS = ["*"]
    sign_up(client, "dana@example.com", HTTP_HOST="evil.example")
    sign_up(client, "alice@example.com", HTTP_HOST="evil.example")

    for message in mail.outbox:
        assert "evil.example" not in message.body
        assert BASE_URL in message.body
    link_in(mail.outbox[0])


def test_a_sign_up_long_unconfirmed_is_forgotten_by_a_later_one(client, db):
    sign_up(client, "dana@example.com")
    PendingSignUp.objects.update(
        created_at=PendingSignUp.objects.get().created_at.replace(year=2000)
    )

    sign_up(client, "erin@example.com")

    assert list(PendingSignUp.objects.values_list("email", flat=True)) == ["erin@example.com"]


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short1", "This password is too short"),
        ("password123", "This password is too common"),
        ("83749201746", "This password is entirely numeric"),
    ],
)
def test_a_weak_password_is_refused_on_the_form(client, db, password, message):
    response = sign_up(client, "dana@example.com", password)

    assert response.status_code == 200
    assert message in response.content.decode()
    assert mail.outbox == []


def test_a_password_like_the_address_is_refused(client, db):
    response = sign_up(client, "dana.horowitz@example.com", "dana.horowitz")
    assert "too similar to the email address" in response.content.decode()
    assert mail.outbox == []


def test_mismatched_passwords_are_refused_on_the_form(client, db):
    response = sign_up(client, "dana@example.com", STRONG, "another-pass-99")
    assert "The two password fields didn\u2019t match" in response.content.decode()
    assert mail.outbox == []


def test_a_signed_in_person_is_sent_home_from_the_sign_up_page(browser_for, alice):
    response = browser_for(alice).get(SIGNUP)
    assert response.status_code == 302
    assert response["Location"] == "/"
