import pytest
from django.db import connection

from catalog.models import ProviderApi
from catalog.selectors import provider_api_upstream_secret
from catalog.services import provider_api_secret_set
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db

PLAINTEXT = "sk_live_0123456789abcdef"


def raw_rows() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM catalog_providerapi")
        return repr(cursor.fetchall())


def test_the_database_never_holds_the_plaintext_secret():
    api = make_provider_api("payroll", upstream_auth_type="bearer")
    provider_api_secret_set(api=api, secret=PLAINTEXT)
    assert PLAINTEXT not in raw_rows()
    assert ProviderApi.objects.get(pk=api.pk).upstream_secret_encrypted.startswith("gAAAAA")


def test_the_secret_decrypts_for_the_gateway_and_clears(settings):
    api = make_provider_api("payroll", upstream_auth_type="bearer")
    provider_api_secret_set(api=api, secret=PLAINTEXT)
    assert provider_api_upstream_secret(api=ProviderApi.objects.get(pk=api.pk)) == PLAINTEXT
    provider_api_secret_set(api=api, secret="")
    assert provider_api_upstream_secret(api=ProviderApi.objects.get(pk=api.pk)) == ""


def test_a_rotated_key_still_decrypts_secrets_written_with_the_old_one(settings):
    from cryptography.fernet import Fernet

    api = make_provider_api("payroll", upstream_auth_type="bearer")
    provider_api_secret_set(api=api, secret=PLAINTEXT)
    settings.CATALOG_SECRET_KEY = [Fernet.generate_key().decode(), *settings.CATALOG_SECRET_KEY]
    assert provider_api_upstream_secret(api=ProviderApi.objects.get(pk=api.pk)) == PLAINTEXT


def test_a_secret_under_a_lost_key_fails_loudly_without_revealing_anything(settings):
    from cryptography.fernet import Fernet

    api = make_provider_api("payroll", upstream_auth_type="bearer")
    provider_api_secret_set(api=api, secret=PLAINTEXT)
    settings.CATALOG_SECRET_KEY = [Fernet.generate_key().decode()]
    with pytest.raises(ValueError, match="CATALOG_SECRET_KEY"):
        provider_api_upstream_secret(api=ProviderApi.objects.get(pk=api.pk))


def test_no_discovery_answer_contains_the_secret(client_for, alice):
    api = make_provider_api("payroll", upstream_auth_type="header", upstream_auth_name="X-Key")
    make_endpoint(api, "/v1/pay", "POST")
    provider_api_secret_set(api=api, secret=PLAINTEXT)
    token = ProviderApi.objects.get(pk=api.pk).upstream_secret_encrypted
    client = client_for(alice.live_key)
    answers = [
        client.get("/v1/list-endpoints"),
        client.post("/v1/details", {"api": "payroll", "path": "/v1/pay"}, format="json"),
        client.post(
            "/v1/integrate", {"api": "payroll", "path": "/v1/pay", "format": "all"}, format="json"
        ),
    ]
    for response in answers:
        assert response.status_code == 200
        assert PLAINTEXT.encode() not in response.content
        assert token.encode() not in response.content
