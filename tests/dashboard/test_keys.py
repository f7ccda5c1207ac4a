import pytest
from django.test import Client

from gateway.models import ApiKey
from tests.factories import api_key_row


def create_key(browser, name="laptop", mode="live", account=""):
    query = f"?account={account}" if account else ""
    return browser.post(f"/keys/new{query}", {"name": name, "mode": mode})


def shown_secret(page) -> str | None:
    html = page.content.decode()
    marker = 'id="new-key-secret" class="secret" type="text" value="'
    if marker not in html:
        return None
    return html.split(marker, 1)[1].split('"', 1)[0]


# --- the list -------------------------------------------------------------------------------


def test_the_keys_page_lists_a_persons_keys_masked(browser_for, alice):
    page = browser_for(alice).get("/keys").content.decode()

    live = api_key_row(alice.live_key)
    assert live.masked in page
    assert api_key_row(alice.test_key).masked in page
    assert alice.live_key not in page
    assert "Never" in page  # neither key was used yet
    assert "Active" in page


def test_a_used_key_shows_when_it_was_last_used(browser_for, client_for, alice):
    client_for(alice.live_key).get("/v1/whoami")
    page = browser_for(alice).get("/keys")
    live = next(key for key in page.context["keys"] if key.name == "live")
    assert live.last_used_at is not None


def test_personal_keys_do_not_list_the_organizations_keys(browser_for, alice):
    page = browser_for(alice).get("/keys").content.decode()
    assert api_key_row(alice.org_key).masked not in page


# --- creating a key and the once-only secret ---------------------------------------------------


def test_a_new_key_is_shown_once_in_full_and_works_against_the_api(browser_for, client_for, alice):
    browser = browser_for(alice)

    response = create_key(browser, name="ci runner", mode="test")

    assert response.status_code == 302
    assert response["Location"] == "/keys/created"
    assert "gw_" not in response["Location"]
    page = browser.get("/keys/created")
    secret = shown_secret(page)
    assert secret.startswith("gw_test_")
    assert "it will not be shown again" in page.content.decode()
    assert "no-store" in page["Cache-Control"]

    whoami = client_for(secret).get("/v1/whoami").json()["data"]
    assert whoami["key"] == {
        "masked": secret[:12] + "…" + secret[-4:],
        "name": "ci runner",
        "mode": "test",
    }
    assert whoami["owner"] == {"type": "user", "name": "alice@example.com"}


def test_reloading_the_new_key_page_does_not_show_the_secret_again(browser_for, alice):
    browser = browser_for(alice)
    create_key(browser)
    secret = shown_secret(browser.get("/keys/created"))

    reload = browser.get("/keys/created", follow=True)

    assert reload.redirect_chain == [("/keys", 302)]
    assert shown_secret(reload) is None
    assert secret not in reload.content.decode()
    assert "shown only once" in reload.content.decode()
    assert secret not in str(dict(browser.session))


def test_a_secret_whose_page_was_skipped_is_discarded_by_the_keys_list(browser_for, alice):
    browser = browser_for(alice)
    create_key(browser)  # the redirect to the secret's page is never followed

    browser.get("/keys")

    assert shown_secret(browser.get("/keys/created", follow=True)) is None
    assert "dashboard:new_api_key" not in browser.session


def test_a_key_needs_a_name_and_a_mode(browser_for, alice):
    response = browser_for(alice).post("/keys/new", {"name": "", "mode": "prod"})

    assert response.status_code == 200
    html = response.content.decode()
    assert "This field is required." in html
    assert "Select a valid choice. prod is not one of the available choices." in html
    assert ApiKey.objects.filter(user=alice.user).count() == 2


# --- revoking ---------------------------------------------------------------------------------


def test_revoking_asks_for_confirmation_first(browser_for, alice):
    key = api_key_row(alice.live_key)

    page = browser_for(alice).get(f"/keys/{key.pk}/revoke")

    assert page.status_code == 200
    assert "This cannot be undone" in page.content.decode()
    key.refresh_from_db()
    assert not key.is_revoked


def test_a_revoked_key_is_refused_by_the_api(
    browser_for, client_for, alice, django_capture_on_commit_callbacks
):
    api = client_for(alice.live_key)
    assert api.get("/v1/whoami").status_code == 200
    key = api_key_row(alice.live_key)

    with django_capture_on_commit_callbacks(execute=True):
        response = browser_for(alice).post(f"/keys/{key.pk}/revoke", follow=True)

    assert response.redirect_chain == [("/keys", 302)]
    assert "is revoked" in response.content.decode()
    assert "Revoked" in response.content.decode()
    refused = api.get("/v1/whoami")
    assert refused.status_code == 401
    assert "revoked" in refused.json()["error"]


def test_revoking_twice_changes_nothing(browser_for, alice):
    key = api_key_row(alice.live_key)
    browser = browser_for(alice)
    browser.post(f"/keys/{key.pk}/revoke")
    key.refresh_from_db()
    first = key.revoked_at

    browser.post(f"/keys/{key.pk}/revoke")

    key.refresh_from_db()
    assert key.revoked_at == first


# --- organization keys ------------------------------------------------------------------------


def test_an_owner_creates_an_organization_key_in_the_organization_context(
    browser_for, client_for, alice
):
    browser = browser_for(alice)

    response = create_key(browser, name="shared", account="org:acme")

    assert response["Location"] == "/keys/created?account=org:acme"
    secret = shown_secret(browser.get(response["Location"]))
    key = api_key_row(secret)
    assert key.organization == alice.organization
    assert key.user is None
    owner = client_for(secret).get("/v1/whoami").json()["data"]["owner"]
    assert owner == {"type": "organization", "name": "acme"}


def test_members_see_the_organizations_keys(browser_for, bob):
    page = browser_for(bob).get("/keys?account=org:acme")

    assert page.status_code == 200
    html = page.content.decode()
    org_key = bob.organization.api_keys.get()
    assert org_key.masked in html
    assert "Only owners of Acme can create or revoke its keys" in html
    assert 'href="/keys/new?account=org:acme"' not in html
    assert f'href="/keys/{org_key.pk}/revoke"' not in html


def test_members_may_not_create_or_revoke_organization_keys(browser_for, bob):
    browser = browser_for(bob)
    org_key = bob.organization.api_keys.get()

    assert browser.get("/keys/new?account=org:acme").status_code == 403
    assert create_key(browser, account="org:acme").status_code == 403
    assert browser.get(f"/keys/{org_key.pk}/revoke").status_code == 403
    assert browser.post(f"/keys/{org_key.pk}/revoke").status_code == 403

    org_key.refresh_from_db()
    assert not org_key.is_revoked
    assert bob.organization.api_keys.count() == 1


def test_an_owner_revokes_an_organization_key(browser_for, alice):
    org_key = api_key_row(alice.org_key)

    response = browser_for(alice).post(f"/keys/{org_key.pk}/revoke")

    assert response["Location"] == "/keys?account=org:acme"
    org_key.refresh_from_db()
    assert org_key.is_revoked


def test_a_member_still_manages_their_own_personal_keys(browser_for, bob):
    browser = browser_for(bob)
    assert create_key(browser).status_code == 302
    own = api_key_row(bob.live_key)
    assert browser.post(f"/keys/{own.pk}/revoke").status_code == 302


# --- outsiders --------------------------------------------------------------------------------


def test_outsiders_get_404_for_another_persons_key(browser_for, alice, charlie):
    browser = browser_for(charlie)
    key = api_key_row(alice.live_key)

    assert browser.get(f"/keys/{key.pk}/revoke").status_code == 404
    assert browser.post(f"/keys/{key.pk}/revoke").status_code == 404
    key.refresh_from_db()
    assert not key.is_revoked


def test_outsiders_get_404_for_an_organizations_key_and_keys_page(browser_for, alice, charlie):
    browser = browser_for(charlie)
    org_key = api_key_row(alice.org_key)

    assert browser.post(f"/keys/{org_key.pk}/revoke").status_code == 404
    assert browser.get("/keys?account=org:acme").status_code == 404
    assert create_key(browser, account="org:acme").status_code == 404
    assert not ApiKey.objects.filter(name="laptop").exists()


def test_an_unknown_key_or_account_is_404(browser_for, alice):
    browser = browser_for(alice)
    assert browser.get("/keys/999999/revoke").status_code == 404
    assert browser.get("/keys?account=org:nowhere").status_code == 404
    assert browser.get("/keys?account=acme").status_code == 404


def test_a_former_member_loses_the_organizations_keys(browser_for, alice, bob):
    bob.user.memberships.all().delete()
    assert browser_for(bob).get("/keys?account=org:acme").status_code == 404


@pytest.mark.parametrize("path", ["/keys/new", "/keys/1/revoke"])
def test_key_changes_need_the_csrf_token(alice, path):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice.user)
    key = api_key_row(alice.live_key)
    path = path.replace("/1/", f"/{key.pk}/")

    response = browser.post(path, {"name": "sneaky", "mode": "live"})

    assert response.status_code == 403
    key.refresh_from_db()
    assert not key.is_revoked
    assert not ApiKey.objects.filter(name="sneaky").exists()
