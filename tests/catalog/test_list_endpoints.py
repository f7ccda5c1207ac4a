import pytest

from catalog.apis import EndpointListOutputSerializer
from catalog.models import Endpoint
from catalog.services import endpoints_set_enabled, provider_api_secret_set
from gateway.pagination import MAX_OFFSET
from tests.catalog.conftest import assert_matches_documented_shape, import_documents
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog():
    """Seven listable APIs (a-api … g-api), two of them verified, plus hidden ones."""
    for letter in "abcdefg":
        api = make_provider_api(f"{letter}-api", verified=letter in "bd")
        make_endpoint(api, "/v1/one", verified=letter in "bd")
        make_endpoint(api, "/v1/two", "POST", is_payable=letter != "c")
    make_endpoint(make_provider_api("off-api", enabled=False), "/v1/x")
    make_provider_api("empty-api")  # no endpoints: nothing to list
    make_endpoint(make_provider_api("gone-api"), "/v1/x", enabled=False)


def list_page(client, **params):
    response = client.get("/v1/list-endpoints", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_paging_to_the_end_visits_every_enabled_api_exactly_once(client_for, alice, catalog):
    client = client_for(alice.live_key)
    seen, offset = [], 0
    while True:
        page = list_page(client, limit=3, offset=offset)
        seen.extend(api["slug"] for api in page["apis"])
        assert page["count"] == len(page["apis"])
        assert page["pagination"] == {
            "limit": 3,
            "offset": offset,
            "hasMore": page["pagination"]["hasMore"],
        }
        if not page["pagination"]["hasMore"]:
            break
        offset += 3
    assert seen == [f"{letter}-api" for letter in "abcdefg"]
    assert offset == 6


def test_a_page_counts_its_endpoints_and_says_whether_more_follow(client_for, alice, catalog):
    page = list_page(client_for(alice.live_key), limit=2)
    assert [api["slug"] for api in page["apis"]] == ["a-api", "b-api"]
    assert page["totalEndpoints"] == 4
    assert page["pagination"]["hasMore"] is True
    last = list_page(client_for(alice.live_key), limit=2, offset=6)
    assert [api["slug"] for api in last["apis"]] == ["g-api"]
    assert last["pagination"]["hasMore"] is False
    beyond = list_page(client_for(alice.live_key), offset=50)
    assert (beyond["apis"], beyond["count"], beyond["pagination"]["hasMore"]) == ([], 0, False)


def test_the_defaults_are_limit_100_and_offset_0(client_for, alice, catalog):
    page = list_page(client_for(alice.live_key))
    assert page["pagination"] == {"limit": 100, "offset": 0, "hasMore": False}
    assert page["count"] == 7


def test_an_entry_has_the_contract_fields_and_prices_with_a_dollar_sign(client_for, alice, hunter):
    page = list_page(client_for(alice.live_key))
    assert_matches_documented_shape(EndpointListOutputSerializer, page)
    [api] = page["apis"]
    assert {key: api[key] for key in ("name", "slug", "baseUrl", "verified", "category")} == {
        "name": "Hunter",
        "slug": "hunter",
        "baseUrl": "https://api.hunter.example/v2",
        "verified": True,
        "category": "people-email",
    }
    by_path = {(ep["method"], ep["path"]): ep for ep in api["endpoints"]}
    assert ("POST", "/internal/reindex") not in by_path  # disabled in the document
    verifier = by_path[("GET", "/email-verifier")]
    assert verifier["price"] == "$0.01"
    assert verifier["priceUnit"] == "call"
    assert verifier["isPayable"] is True
    assert verifier["docsUrl"] == "https://hunter.example/api-documentation"
    assert verifier["queryParams"][0]["name"] == "email"
    assert by_path[("GET", "/domain-search")]["price"] == "$0.0025"
    assert by_path[("GET", "/domain-search")]["priceUnit"] == "result"
    assert by_path[("POST", "/leads")]["price"] == "$0.00"
    assert by_path[("POST", "/leads")]["bodyParams"][0]["name"] == "email"


def test_a_dynamic_price_is_listed_as_dynamic(client_for, alice):
    import_documents("llm-oas31.yaml")
    [api] = list_page(client_for(alice.live_key))["apis"]
    chat = next(ep for ep in api["endpoints"] if ep["path"] == "/chat/completions")
    assert chat["price"] == "dynamic"
    assert api["category"] == "llm"


def test_the_verified_filter_keeps_verified_apis_and_endpoints(client_for, alice, catalog):
    page = list_page(client_for(alice.live_key), verified="true")
    assert [api["slug"] for api in page["apis"]] == ["b-api", "d-api"]
    assert page["totalEndpoints"] == 2
    assert all(ep["verified"] for api in page["apis"] for ep in api["endpoints"])


def test_the_payable_filter_keeps_payable_endpoints(client_for, alice, catalog):
    page = list_page(client_for(alice.live_key), isPayable="true")
    c_api = next(api for api in page["apis"] if api["slug"] == "c-api")
    assert [ep["path"] for ep in c_api["endpoints"]] == ["/v1/one"]
    unpayable = list_page(client_for(alice.live_key), isPayable="false")
    assert [api["slug"] for api in unpayable["apis"]] == ["c-api"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("limit=1.5", "limit"),
        ("offset=-1", "offset"),
        ("offset=x", "offset"),
        ("limit=", "limit"),
        ("offset=", "offset"),
        ("offset=2374188938519459659776", "offset"),
        ("verified=maybe", "verified"),
        ("isPayable=2", "isPayable"),
        ("verified=", "verified"),
        ("isPayable=", "isPayable"),
    ],
)
def test_out_of_bounds_or_malformed_parameters_are_a_400_naming_the_field(
    client_for, alice, query, field
):
    response = client_for(alice.live_key).get(f"/v1/list-endpoints?{query}")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "INVALID_REQUEST"
    assert body["error"].startswith(f"{field}:")


def test_the_largest_offset_is_an_empty_page(client_for, alice, catalog):
    page = list_page(client_for(alice.live_key), offset=MAX_OFFSET)
    assert page["apis"] == [] and page["pagination"]["hasMore"] is False


def test_limit_500_is_allowed(client_for, alice, catalog):
    assert list_page(client_for(alice.live_key), limit=500)["pagination"]["limit"] == 500


def test_a_change_to_the_catalog_shows_at_once_despite_the_cache(client_for, alice, catalog):
    client = client_for(alice.live_key)
    assert list_page(client)["totalEndpoints"] == 14
    endpoints_set_enabled(
        endpoint_ids=Endpoint.objects.filter(api__slug="a-api").values_list("pk", flat=True),
        enabled=False,
    )
    page = list_page(client)
    assert page["totalEndpoints"] == 12
    assert "a-api" not in [api["slug"] for api in page["apis"]]


def test_upstream_secrets_never_appear_in_the_list(client_for, alice):
    api = make_provider_api("secretive", upstream_auth_type="bearer")
    make_endpoint(api)
    provider_api_secret_set(api=api, secret="sk-live-very-secret")
    response = client_for(alice.live_key).get("/v1/list-endpoints")
    assert b"sk-live-very-secret" not in response.content
    assert api.upstream_secret_encrypted.encode() not in response.content


def test_any_valid_key_may_list_the_catalog(client_for, alice, charlie, catalog):
    for key in (charlie.live_key, charlie.test_key, alice.org_key):
        assert list_page(client_for(key))["count"] == 7


def test_listing_without_a_key_is_a_401(client_for, catalog):
    response = client_for(None).get("/v1/list-endpoints")
    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHORIZED"


def test_endpoints_are_described_in_plain_text(client_for, alice, catalog):
    api = make_provider_api("h-api")
    make_endpoint(api, "/v1/html", summary="", description="<p>Lists the <i>open</i> orders.</p>")
    make_endpoint(api, "/v1/md", summary="[Get an order](https://h.example/docs) by id")

    page = list_page(client_for(alice.live_key), offset=7)

    assert [api["slug"] for api in page["apis"]] == ["h-api"]
    described = {ep["path"]: ep["description"] for ep in page["apis"][0]["endpoints"]}
    assert described == {"/v1/html": "Lists the open orders.", "/v1/md": "Get an order by id"}
