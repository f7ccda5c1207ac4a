from datetime import timedelta

import pytest
from django.utils import timezone

from gateway.services import api_key_revoke
from tests.factories import api_key_row

WHOAMI = "/v1/whoami"


def assert_unauthorized(response, message_part: str):
    assert response.status_code == 401
    body = response.json()
    assert body["success"] is False
    assert body["code"] == "UNAUTHORIZED"
    assert message_part in body["error"]
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_request_without_a_key_is_refused(client_for, db):
    assert_unauthorized(client_for(None).get(WHOAMI), "Missing API key")


@pytest.mark.parametrize(
    "header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "gw_live_abc", "Bearer a b"]
)
def test_a_malformed_authorization_header_is_refused(client, db, header):
    response = client.get(WHOAMI, HTTP_AUTHORIZATION=header)
    assert_unauthorized(response, "Malformed Authorization header")


@pytest.mark.parametrize("secret", ["sk_live_1234567890", "gw_live_short", "gw_prod_" + "a" * 40])
def test_a_key_of_the_wrong_shape_is_refused(client_for, db, secret):
    assert_unauthorized(client_for(secret).get(WHOAMI), "Malformed API key")


def test_an_unknown_key_is_refused(client_for, db):
    assert_unauthorized(client_for("gw_live_" + "x" * 43).get(WHOAMI), "Unknown API key")


def test_a_revoked_key_is_refused_even_after_it_was_cached(
    client_for, alice, django_capture_on_commit_callbacks
):
    client = client_for(alice.live_key)
    assert client.get(WHOAMI).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        api_key_revoke(api_key=api_key_row(alice.live_key))
    assert_unauthorized(client.get(WHOAMI), "revoked")


def test_a_deactivated_owners_key_is_refused(client_for, alice):
    alice.user.is_active = False
    alice.user.save(update_fields=["is_active"])
    assert_unauthorized(client_for(alice.live_key).get(WHOAMI), "deactivated")


@pytest.mark.parametrize("mode", ["live", "test"])
def test_live_and_test_keys_authenticate_and_report_their_mode(client_for, alice, mode):
    secret = alice.live_key if mode == "live" else alice.test_key
    response = client_for(secret).get(WHOAMI)
    assert response.status_code == 200
    data = response.json()["data"]
    assert data["key"]["mode"] == mode
    assert data["key"]["masked"] == f"{secret[:12]}…{secret[-4:]}"
    assert data["owner"] == {"type": "user", "name": "alice@example.com"}


def test_an_organization_key_speaks_for_the_organization(client_for, alice):
    data = client_for(alice.org_key).get(WHOAMI).json()["data"]
    assert data["owner"] == {"type": "organization", "name": "acme"}


def test_last_use_is_recorded_at_most_once_a_minute(client_for, alice):
    client = client_for(alice.live_key)
    client.get(WHOAMI)
    first_use = api_key_row(alice.live_key).last_used_at
    assert first_use is not None
    assert timezone.now() - first_use < timedelta(seconds=5)

    client.get(WHOAMI)
    assert api_key_row(alice.live_key).last_used_at == first_use
