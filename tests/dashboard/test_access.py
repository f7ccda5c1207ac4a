import pytest

from tests.factories import api_key_row

SIGNED_IN_PAGES = [
    "/keys",
    "/keys/new",
    "/keys/created",
    "/balance",
    "/usage",
    "/transactions",
    "/orgs",
    "/orgs/acme",
    "/password/change",
]


@pytest.mark.parametrize("path", SIGNED_IN_PAGES)
def test_a_visitor_is_sent_to_sign_in_and_back(client, alice, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"] == f"/login?next={path}"


def test_a_visitor_cannot_revoke_a_key(client, alice):
    key = api_key_row(alice.live_key)
    response = client.post(f"/keys/{key.pk}/revoke")
    assert response["Location"].startswith("/login")
    key.refresh_from_db()
    assert not key.is_revoked


def test_the_api_keeps_its_error_envelope_under_v1(client, db):
    response = client.get("/v1/keys")
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"


def test_an_unknown_page_is_a_friendly_404(client, db, settings):
    settings.DEBUG = False
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()
