import re

from django.core import mail

OLD = "correct horse battery staple"
NEW = "violet-harbour-trumpet-7"


def test_a_person_changes_their_password_and_stays_signed_in(browser_for, alice):
    browser = browser_for(alice)

    response = browser.post(
        "/password/change",
        {"old_password": OLD, "new_password1": NEW, "new_password2": NEW},
    )

    assert response.status_code == 302
    assert response["Location"] == "/password/change/done"
    alice.user.refresh_from_db()
    assert alice.user.check_password(NEW)
    assert browser.get("/keys").status_code == 200


def test_changing_the_password_needs_the_current_one(browser_for, alice):
    response = browser_for(alice).post(
        "/password/change",
        {"old_password": "wrong", "new_password1": NEW, "new_password2": NEW},
    )

    assert response.status_code == 200
    assert "Your old password was entered incorrectly" in response.content.decode()
    alice.user.refresh_from_db()
    assert alice.user.check_password(OLD)


def test_a_forgotten_password_is_reset_through_the_emailed_link(client, alice):
    response = client.post("/password/reset", {"email": "alice@example.com"})

    assert response["Location"] == "/password/reset/sent"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.com"]
    assert message.subject == "Reset your API Gateway password"
    link = re.search(r"https?://\S+?(/password/reset/\S+)", message.body).group(1)

    form_page = client.get(link, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    done = client.post(
        form_page.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW}
    )

    assert done["Location"] == "/password/reset/complete"
    alice.user.refresh_from_db()
    assert alice.user.check_password(NEW)
    assert (
        client.post("/login", {"username": "alice@example.com", "password": NEW}).status_code == 302
    )


def test_a_used_reset_link_no_longer_works(client, alice):
    client.post("/password/reset", {"email": "alice@example.com"})
    link = re.search(r"https?://\S+?(/password/reset/\S+)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    client.post(form_page.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})

    again = client.get(link, follow=True)

    assert "This link no longer works" in again.content.decode()


def test_an_unknown_address_sends_nothing_and_reveals_nothing(client, db):
    response = client.post("/password/reset", {"email": "nobody@example.com"})

    assert response["Location"] == "/password/reset/sent"
    assert mail.outbox == []


def test_the_admins_password_change_still_works_with_these_templates(client, alice):
    alice.user.is_staff = True
    alice.user.save(update_fields=["is_staff"])
    client.force_login(alice.user)

    response = client.post(
        "/admin/password_change/",
        {"old_password": OLD, "new_password1": NEW, "new_password2": NEW},
        follow=True,
    )

    assert response.redirect_chain[-1][0] == "/admin/password_change/done/"
    assert "Password changed" in response.content.decode()
    alice.user.refresh_from_db()
    assert alice.user.check_password(NEW)
