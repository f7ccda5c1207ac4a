import pytest
import responses
from django.core.files.uploadedfile import SimpleUploadedFile

from catalog.models import Endpoint, ProviderApi
from catalog.selectors import catalog_version_current, provider_api_upstream_secret
from catalog.services import provider_api_secret_set
from catalog.texts import USE_CASES_MAX
from gateway.models import User
from tests.catalog.conftest import DOCUMENTS
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db

SECRET = "sk_admin_secret_42"


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser(email="operator@example.com", password="pw"))
    return client


@pytest.fixture
def api():
    api = make_provider_api("acme", upstream_auth_type="bearer")
    make_endpoint(api, "/v1/a")
    make_endpoint(api, "/v1/b")
    return api


def api_form(api: ProviderApi, **changes) -> dict:
    data = {
        "name": api.name,
        "slug": api.slug,
        "description": api.description,
        "category": api.category,
        "owner": "",
        "base_url": api.base_url,
        "sandbox_base_url": api.sandbox_base_url,
        "docs_url": api.docs_url,
        "upstream_auth_type": api.upstream_auth_type,
        "upstream_auth_name": api.upstream_auth_name,
        "timeout_seconds": api.timeout_seconds,
        "upstream_secret": "",
        "endpoints-TOTAL_FORMS": "0",
        "endpoints-INITIAL_FORMS": "0",
        "endpoints-MIN_NUM_FORMS": "0",
        "endpoints-MAX_NUM_FORMS": "0",
    }
    if api.verified:
        data["verified"] = "on"
    if api.enabled:
        data["enabled"] = "on"
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def endpoint_form(endpoint: Endpoint, **changes) -> dict:
    data = {
        "operation_id": endpoint.operation_id,
        "summary": endpoint.summary,
        "description": endpoint.description,
        "docs_url": endpoint.docs_url,
        "enabled": "on",
        "is_payable": "on",
        "price_kind": endpoint.price_kind,
        "price_usd": "0.01",
        "result_count_path": "",
        "result_bound_param": "",
        "result_max": "",
        "input_usd_per_mtok": "",
        "output_usd_per_mtok": "",
        "default_max_tokens": "",
        "body_type": "",
        "body_content_type": "",
        "path_params": "[]",
        "query_params": "[]",
        "body_params": "[]",
        "pagination_params": "[]",
        "poll_endpoint": "",
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def change_url(model: str, pk: int) -> str:
    return f"/admin/catalog/{model}/{pk}/change/"


def test_the_admin_is_for_staff_only(client, api):
    response = client.get("/admin/catalog/providerapi/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_the_api_list_searches_and_filters(operator, api):
    make_provider_api("zeta", verified=True, category="maps")
    found = operator.get("/admin/catalog/providerapi/", {"q": "acme"})
    assert found.status_code == 200
    assert b"acme" in found.content and b"zeta" not in found.content
    verified = operator.get("/admin/catalog/providerapi/", {"verified__exact": "1"})
    assert b"zeta" in verified.content and b">acme<" not in verified.content
    assert operator.get("/admin/catalog/providerapi/", {"category": "maps"}).status_code == 200


def test_a_secret_is_stored_encrypted_and_never_rendered_back(operator, api):
    before = catalog_version_current()
    response = operator.post(
        change_url("providerapi", api.pk), api_form(api, upstream_secret=SECRET)
    )
    assert response.status_code == 302, response.content[:2000]
    api.refresh_from_db()
    assert provider_api_upstream_secret(api=api) == SECRET
    assert catalog_version_current() == before + 1
    page = operator.get(change_url("providerapi", api.pk))
    assert SECRET.encode() not in page.content
    assert api.upstream_secret_encrypted.encode() not in page.content
    assert b"set (write-only)" in page.content


def test_a_blank_secret_keeps_the_current_one_and_clear_removes_it(operator, api):
    provider_api_secret_set(api=api, secret=SECRET)
    operator.post(change_url("providerapi", api.pk), api_form(api, description="Edited"))
    api.refresh_from_db()
    assert api.description == "Edited"
    assert provider_api_upstream_secret(api=api) == SECRET
    operator.post(change_url("providerapi", api.pk), api_form(api, clear_upstream_secret="on"))
    api.refresh_from_db()
    assert api.upstream_secret_encrypted == ""


def test_unverifying_by_hand_is_remembered_as_the_operators_choice(operator, api):
    api.verified = True
    api.save()
    operator.post(change_url("providerapi", api.pk), api_form(api, verified=None))
    api.refresh_from_db()
    assert (api.verified, api.verified_by_operator) == (False, True)


def test_the_api_page_shows_a_limited_read_only_list_of_endpoints_and_links_all(operator):
    api = make_provider_api("big")
    for index in range(60):
        make_endpoint(api, f"/v1/e{index:02d}")
    page = operator.get(change_url("providerapi", api.pk))
    assert page.status_code == 200
    content = page.content.decode()
    assert "/v1/e49" in content and "/v1/e50" not in content
    assert f"?api__id__exact={api.pk}" in content
    assert "All 60 endpoints of big" in content


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ("mark_verified", "verified", True),
        ("unverify", "verified", False),
        ("enable", "enabled", True),
        ("disable", "enabled", False),
    ],
)
def test_bulk_actions_on_apis_set_the_flag_and_bump_the_version(
    operator, api, action, field, value
):
    setattr(api, field, not value)
    api.save()
    before = catalog_version_current()
    response = operator.post(
        "/admin/catalog/providerapi/", {"action": action, "_selected_action": [api.pk]}
    )
    assert response.status_code == 302
    api.refresh_from_db()
    assert getattr(api, field) is value
    assert getattr(api, f"{field}_by_operator") is True
    assert catalog_version_current() == before + 1


@pytest.mark.parametrize(
    ("action", "field", "value"),
    [
        ("mark_verified", "verified", True),
        ("unverify", "verified", False),
        ("enable", "enabled", True),
        ("disable", "enabled", False),
    ],
)
def test_bulk_actions_on_endpoints_set_the_flag_and_bump_the_version(
    operator, api, action, field, value
):
    ids = list(api.endpoints.values_list("pk", flat=True))
    api.endpoints.update(**{field: not value})
    before = catalog_version_current()
    operator.post("/admin/catalog/endpoint/", {"action": action, "_selected_action": ids})
    assert set(api.endpoints.values_list(field, flat=True)) == {value}
    assert set(api.endpoints.values_list(f"{field}_by_operator", flat=True)) == {True}
    assert catalog_version_current() == before + 1


def test_the_endpoint_list_filters_by_api_and_edits_flags_in_place(operator, api):
    other = make_endpoint(make_provider_api("other"), "/v9/other")
    page = operator.get("/admin/catalog/endpoint/", {"api__id__exact": api.pk})
    assert b"/v1/a" in page.content and b"/v9/other" not in page.content
    first, second = api.endpoints.order_by("path")
    form = {
        "form-TOTAL_FORMS": "2",
        "form-INITIAL_FORMS": "2",
        "form-0-id": first.pk,
        "form-0-enabled": "on",
        "form-0-is_payable": "on",
        "form-0-verified": "on",
        "form-1-id": second.pk,
        "form-1-enabled": "on",
        "form-1-is_payable": "on",
        "_save": "Save",
    }
    response = operator.post(f"/admin/catalog/endpoint/?api__id__exact={api.pk}", form)
    assert response.status_code == 302
    first.refresh_from_db()
    assert (first.verified, first.verified_by_operator) == (True, True)
    other.refresh_from_db()
    assert other.verified is False


def test_a_price_is_entered_in_dollars_and_stored_in_micro_dollars(operator, api):
    endpoint = api.endpoints.get(path="/v1/a")
    response = operator.post(
        change_url("endpoint", endpoint.pk), endpoint_form(endpoint, price_usd="0.0035")
    )
    assert response.status_code == 302, response.content[:3000]
    endpoint.refresh_from_db()
    assert (endpoint.price_micros, endpoint.price_set_by_operator) == (3_500, True)
    page = operator.get(change_url("endpoint", endpoint.pk))
    assert b'value="0.0035"' in page.content


def test_a_dynamic_price_stores_both_token_prices(operator, api):
    endpoint = api.endpoints.get(path="/v1/a")
    operator.post(
        change_url("endpoint", endpoint.pk),
        endpoint_form(
            endpoint,
            price_kind="dynamic",
            price_usd="",
            input_usd_per_mtok="0.60",
            output_usd_per_mtok="2.20",
        ),
    )
    endpoint.refresh_from_db()
    assert endpoint.price_kind == "dynamic"
    assert (endpoint.input_micros_per_mtok, endpoint.output_micros_per_mtok) == (
        600_000,
        2_200_000,
    )
    assert endpoint.price_micros == 0


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"price_kind": "fixed", "price_usd": ""}, "A fixed price needs an amount"),
        ({"price_kind": "fixed", "price_usd": "abc"}, "is not a dollar amount"),
        ({"price_kind": "fixed", "price_usd": "0.0000001"}, "more than 6 decimal places"),
        ({"price_kind": "per_result", "price_usd": "0.01"}, "needs the response path"),
        (
            {"price_kind": "per_result", "price_usd": "", "result_count_path": "data"},
            "needs the price of one result",
        ),
        (
            {"price_kind": "dynamic", "input_usd_per_mtok": "0.6"},
            "needs both per-million-token prices",
        ),
    ],
)
def test_a_price_that_does_not_fit_its_kind_is_refused(operator, api, changes, message):
    endpoint = api.endpoints.get(path="/v1/a")
    before = catalog_version_current()
    response = operator.post(
        change_url("endpoint", endpoint.pk), endpoint_form(endpoint, **changes)
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    endpoint.refresh_from_db()
    assert endpoint.price_micros == 10_000
    assert catalog_version_current() == before


def test_the_import_page_imports_an_uploaded_document_and_reports_the_summary(operator):
    upload = SimpleUploadedFile(
        "hunter.yaml", (DOCUMENTS / "hunter-oas30.yaml").read_bytes(), "application/yaml"
    )
    response = operator.post(
        "/admin/catalog/providerapi/import/",
        {"document": upload, "price_usd": "0.02"},
        follow=True,
    )
    assert response.status_code == 200
    assert "1 documents imported, 0 failed; APIs: 1 created" in response.content.decode()
    api = ProviderApi.objects.get(slug="hunter")
    assert api.source == "upload:hunter.yaml"
    assert api.endpoints.get(method="PUT").price_micros == 20_000


def test_the_import_page_replaces_another_documents_api_only_when_the_box_is_ticked(operator):
    def upload(name):
        content = (DOCUMENTS / "petstore-swagger2.json").read_bytes()
        return SimpleUploadedFile(name, content, "application/json")

    operator.post("/admin/catalog/providerapi/import/", {"document": upload("petstore.json")})
    refused = operator.post(
        "/admin/catalog/providerapi/import/", {"document": upload("pets.json")}, follow=True
    )
    assert "belongs to the API imported from upload:petstore.json" in refused.content.decode()
    assert ProviderApi.objects.get().source == "upload:petstore.json"

    operator.post(
        "/admin/catalog/providerapi/import/",
        {"document": upload("pets.json"), "replace": "on"},
        follow=True,
    )
    assert ProviderApi.objects.get().source == "upload:pets.json"


def test_the_import_page_reports_a_broken_document(operator):
    upload = SimpleUploadedFile("broken.yaml", (DOCUMENTS / "broken.yaml").read_bytes())
    response = operator.post("/admin/catalog/providerapi/import/", {"document": upload})
    assert response.status_code == 200
    assert "Not imported: broken.yaml: invalid YAML" in response.content.decode()
    assert ProviderApi.objects.count() == 0


@responses.activate
def test_the_import_page_imports_from_a_url(operator):
    responses.get(
        "https://pets.example/swagger.json",
        body=(DOCUMENTS / "petstore-swagger2.json").read_bytes(),
    )
    response = operator.post(
        "/admin/catalog/providerapi/import/",
        {"url": "https://pets.example/swagger.json", "slug": "pets", "verify": "on"},
        follow=True,
    )
    assert "APIs: 1 created" in response.content.decode()
    assert ProviderApi.objects.get(slug="pets").verified is True


def test_the_import_page_wants_a_file_or_a_url(operator):
    response = operator.post("/admin/catalog/providerapi/import/", {})
    assert "Give either a document file or a URL" in response.content.decode()
    assert operator.get("/admin/catalog/providerapi/").content.count(b"Import OpenAPI document")


def test_use_cases_are_entered_one_per_line_and_kept_cleaned(operator, api):
    endpoint = api.endpoints.get(path="/v1/a")
    response = operator.post(
        change_url("endpoint", endpoint.pk),
        endpoint_form(
            endpoint,
            use_cases="  find a   person's email\r\n\r\nwho works at acme\nwho works at acme",
        ),
    )
    assert response.status_code == 302, response.content[:3000]
    endpoint.refresh_from_db()
    assert endpoint.use_cases == "find a person's email\nwho works at acme"


@pytest.mark.parametrize(
    ("use_cases", "message"),
    [
        (
            "\n".join(f"need {number}" for number in range(USE_CASES_MAX + 1)),
            f"holds {USE_CASES_MAX + 1} use cases, at most {USE_CASES_MAX}",
        ),
        ("fine\n" + "x" * 201, "item 2 is longer than 200 characters"),
    ],
)
def test_too_many_or_too_long_use_cases_are_refused(operator, api, use_cases, message):
    endpoint = api.endpoints.get(path="/v1/a")
    response = operator.post(
        change_url("endpoint", endpoint.pk), endpoint_form(endpoint, use_cases=use_cases)
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    endpoint.refresh_from_db()
    assert endpoint.use_cases == ""
