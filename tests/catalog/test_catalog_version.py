import pytest

from catalog.selectors import catalog_version_current
from catalog.services import (
    catalog_version_bump,
    endpoint_save,
    endpoints_set_enabled,
    endpoints_set_verified,
    provider_api_save,
    provider_api_secret_set,
    provider_apis_set_enabled,
    provider_apis_set_verified,
)
from tests.catalog.conftest import import_documents
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db


def test_the_version_starts_at_zero_and_each_bump_moves_it_by_one():
    assert catalog_version_current() == 0
    assert catalog_version_bump() == 1
    assert catalog_version_bump() == 2
    assert catalog_version_current() == 2


def test_an_import_bumps_the_version_and_an_unchanged_reimport_does_not():
    import_documents("hunter-oas30.yaml")
    after_import = catalog_version_current()
    assert after_import == 1
    import_documents("hunter-oas30.yaml")
    assert catalog_version_current() == after_import


@pytest.mark.parametrize(
    "write",
    [
        lambda api, ep: provider_api_save(api=api, changed_fields=["name"]),
        lambda api, ep: provider_api_secret_set(api=api, secret="s3cret"),
        lambda api, ep: provider_apis_set_verified(api_ids=[api.pk], verified=True),
        lambda api, ep: provider_apis_set_enabled(api_ids=[api.pk], enabled=False),
        lambda api, ep: endpoint_save(endpoint=ep, changed_fields=["summary"]),
        lambda api, ep: endpoints_set_verified(endpoint_ids=[ep.pk], verified=True),
        lambda api, ep: endpoints_set_enabled(endpoint_ids=[ep.pk], enabled=False),
    ],
    ids=[
        "api save",
        "secret set",
        "api verified",
        "api enabled",
        "endpoint save",
        "endpoint verified",
        "endpoint enabled",
    ],
)
def test_every_catalog_write_bumps_the_version(write):
    api = make_provider_api("acme")
    ep = make_endpoint(api)
    before = catalog_version_current()
    write(api, ep)
    assert catalog_version_current() == before + 1


def test_bulk_actions_mark_the_choice_as_the_operators():
    api = make_provider_api("acme")
    ep = make_endpoint(api)
    provider_apis_set_verified(api_ids=[api.pk], verified=True)
    endpoints_set_enabled(endpoint_ids=[ep.pk], enabled=False)
    api.refresh_from_db()
    ep.refresh_from_db()
    assert (api.verified, api.verified_by_operator) == (True, True)
    assert (ep.enabled, ep.enabled_by_operator) == (False, True)
