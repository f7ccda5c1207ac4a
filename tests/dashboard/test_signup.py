import pytest

from gateway.models import User

SIGNUP = "/signup"
STRONG = "plum-orbit-canyon-42"


def sign_up(client, email, password=STRONG, confirmation=None):
    return client.post(
        SIGNUP,
        {"email": email, "password1": password, "password2": confirmation or password},
    )


def test_signing_up_creates_the_account_and_signs_the_person_in(client, db):
    response = sign_up(client, "Dana@Example.com")

    assert response.status_code == 302
    assert response["Location"] == "/"
    user = User.objects.get()
    assert user.email == "dana@example.com"
    assert user.check_password(STRONG)
    home = client.get("/")
    assert home.context["user"] == user
    assert "Signed in as dana@example.com" in home.content.decode()


def test_the_new_person_can_sign_in_again_with_their_password(client, db):
    sign_up(client, "dana@example.com")
    client.post("/logout")
    response = client.post("/login", {"username": "dana@example.com", "password": STRONG})
    assert response.status_code == 302


def test_an_address_already_in_use_is_refused_on_the_form(client, alice):
    response = sign_up(client, "ALICE@example.com")

    assert response.status_code == 200
    assert "An account with this email address already exists" in response.content.decode()
    assert User.objects.filter(email__iexact="alice@example.com").count() == 1
    assert "_auth_user_id" not in client.session


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
    assert not User.objects.exists()


def test_a_password_like_the_address_is_refused(client, db):
    response = sign_up(client, "dana.horowitz@example.com", "dana.horowitz")
    assert "too similar to the email address" in response.content.decode()
    assert not User.objects.exists()


def test_mismatched_passwords_are_refused_on_the_form(client, db):
    response = sign_up(client, "dana@example.com", STRONG, "another-pass-99")
    assert "The two password fields didn\u2019t match" in response.content.decode()
    assert not User.objects.exists()


def test_a_signed_in_person_is_sent_home_from_the_sign_up_page(browser_for, alice):
    response = browser_for(alice).get(SIGNUP)
    assert response.status_code == 302
    assert response["Location"] == "/"
