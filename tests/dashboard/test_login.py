from django.test import Client

PASSWORD = "correct horse battery staple"


def test_a_person_signs_in_with_email_and_password(client, alice):
    response = client.post("/login", {"username": "alice@example.com", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert int(client.session["_auth_user_id"]) == alice.user.pk


def test_the_email_address_is_matched_whatever_its_case(client, alice):
    response = client.post("/login", {"username": " Alice@Example.COM", "password": PASSWORD})
    assert response.status_code == 302


def test_a_wrong_password_shows_an_error_and_does_not_sign_in(client, alice):
    response = client.post("/login", {"username": "alice@example.com", "password": "nope"})

    assert response.status_code == 200
    assert "Please enter a correct email address and password" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_signing_in_returns_to_the_page_that_asked_for_it(client, alice):
    response = client.post(
        "/login?next=/usage",
        {"username": "alice@example.com", "password": PASSWORD, "next": "/usage"},
    )
    assert response["Location"] == "/usage"


def test_the_sign_in_page_links_to_sign_up_and_password_reset(client, db):
    page = client.get("/login").content.decode()
    assert 'href="/signup"' in page
    assert 'href="/password/reset"' in page


def test_signing_out_is_a_post_that_ends_the_session(browser_for, alice):
    browser = browser_for(alice)

    assert browser.get("/logout").status_code == 405
    assert browser.get("/keys").status_code == 200

    response = browser.post("/logout")

    assert response.status_code == 302
    assert "_auth_user_id" not in browser.session
    assert browser.get("/keys")["Location"] == "/login?next=/keys"


def test_signing_out_needs_the_csrf_token(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice.user)

    assert browser.post("/logout").status_code == 403
    assert "_auth_user_id" in browser.session
