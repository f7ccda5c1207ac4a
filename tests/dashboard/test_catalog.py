"""The catalog browser: the API list, API pages, endpoint pages and search."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from catalog.search import search_index_reset
from catalog.selectors import endpoint_integration
from catalog.services import endpoint_embeddings_refresh
from catalog.snippets import FORMATS
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db


def endpoint_url(slug, method, path) -> str:
    return reverse("dashboard:catalog-endpoint", args=[slug, method, path])


@pytest.fixture
def mailcheck(db):
    """A verified API with a per-result, a dynamic, a free and a disabled endpoint."""
    api = make_provider_api(
        "mailcheck",
        name="MailCheck",
        description="Email verification and email finding for sales teams.",
        category="people-email",
        docs_url="https://docs.mailcheck.example",
        verified=True,
    )
    make_endpoint(
        api,
        "/v1/domain/{domain}/emails",
        summary="Find the work emails of the people at a company",
        description="Every address found for a company domain, with names and job titles.",
        price_kind="per_result",
        price_micros=2_500,
        result_count_path="data.emails",
        result_bound_param="limit",
        result_max=100,
        verified=True,
        path_params=[
            {"name": "domain", "type": "string", "required": True, "description": "The domain"}
        ],
        query_params=[
            {
                "name": "limit",
                "type": "integer",
                "required": False,
                "description": "Most addresses to return",
                "minimum": 1,
                "maximum": 100,
                "default": 10,
            },
            {"name": "type", "type": "string", "enum": ["personal", "generic"]},
        ],
    )
    make_endpoint(
        api,
        "/v1/verify",
        "POST",
        summary="Verify that an email address is deliverable",
        body_type="object",
        body_params=[
            {
                "name": "emails",
                "type": "array",
                "items": "string",
                "required": True,
                "description": "Addresses to check",
            }
        ],
    )
    make_endpoint(
        api,
        "/v1/write",
        "POST",
        summary="Write an outreach email with a language model",
        price_kind="dynamic",
        price_micros=0,
        input_micros_per_mtok=600_000,
        output_micros_per_mtok=2_200_000,
    )
    make_endpoint(
        api,
        "/v1/account",
        summary="Remaining credits on the account",
        price_kind="free",
        is_payable=False,
    )
    make_endpoint(api, "/v1/legacy", summary="The old verification call", enabled=False)
    return api


@pytest.fixture
def shotter(db):
    api = make_provider_api(
        "shotter", name="Shotter", description="Renders web pages in a real browser."
    )
    make_endpoint(
        api,
        "/take",
        summary="Take a screenshot of a web page as PNG or PDF",
        query_params=[{"name": "url", "type": "string", "required": True, "description": ""}],
    )
    return api


# --- The list of APIs ----------------------------------------------------------------------------


def test_the_catalog_lists_enabled_apis_with_their_endpoint_counts(
    browser_for, alice, mailcheck, shotter
):
    switched_off = make_provider_api("gone", name="Gone API", enabled=False)
    make_endpoint(switched_off, "/v1/anything")
    make_provider_api("hollow", name="Hollow API")  # nothing to call
    quiet = make_provider_api("quiet", name="Quiet API")
    make_endpoint(quiet, "/v1/off", enabled=False)

    page = browser_for(alice).get("/catalog")

    apis = list(page.context["page_obj"].object_list)
    assert [(api.slug, api.endpoint_count) for api in apis] == [("mailcheck", 4), ("shotter", 1)]
    html = page.content.decode()
    assert 'href="/catalog/apis/mailcheck"' in html
    assert "Gone API" not in html
    assert "Hollow API" not in html
    assert "Quiet API" not in html
    assert html.count("✓ Verified") == 2  # the legend and MailCheck


def test_the_catalog_filters_verified_apis(browser_for, alice, mailcheck, shotter):
    browser = browser_for(alice)

    verified = browser.get("/catalog?verified=yes").context["page_obj"].object_list
    unverified = browser.get("/catalog?verified=no").context["page_obj"].object_list
    anything = browser.get("/catalog?verified=maybe").context["page_obj"].object_list

    assert [api.slug for api in verified] == ["mailcheck"]
    assert [api.slug for api in unverified] == ["shotter"]
    assert [api.slug for api in anything] == ["mailcheck", "shotter"]


def test_a_filter_that_matches_nothing_says_how_to_see_everything(browser_for, alice, shotter):
    html = browser_for(alice).get("/catalog?verified=yes").content.decode()
    assert "No API matches this filter." in html
    assert 'href="/catalog">Show every API</a>' in html


def test_the_catalog_pages_through_apis_keeping_the_filter(browser_for, alice):
    for number in range(27):
        api = make_provider_api(f"api-{number:02}", verified=number != 5)
        make_endpoint(api, "/v1/search")
    browser = browser_for(alice)

    first = browser.get("/catalog?verified=yes")
    second = browser.get("/catalog?verified=yes&page=2")

    assert len(first.context["page_obj"].object_list) == 25
    assert 'href="?verified=yes&amp;page=2" rel="next">Next →</a>' in first.content.decode()
    assert [api.slug for api in second.context["page_obj"].object_list] == ["api-26"]


def test_an_empty_catalog_says_how_apis_are_added(browser_for, alice):
    html = browser_for(alice).get("/catalog").content.decode()
    assert "The catalog is empty." in html
    assert "load_catalog" in html


def test_a_visitor_may_browse_the_catalog(client, mailcheck):
    listing = client.get("/catalog")
    api_page = client.get("/catalog/apis/mailcheck")
    endpoint_page = client.get(endpoint_url("mailcheck", "POST", "/v1/verify"))

    assert [page.status_code for page in (listing, api_page, endpoint_page)] == [200, 200, 200]
    assert "Searching needs an account" in listing.content.decode()
    assert '<a href="/signup">Create an account</a>, then a key' in endpoint_page.content.decode()


def test_the_navigation_links_the_catalog(client, browser_for, alice):
    assert 'href="/catalog">Catalog</a>' in browser_for(alice).get("/").content.decode()
    assert 'href="/catalog">Catalog</a>' in client.get("/").content.decode()


def test_catalog_links_keep_the_organization_being_acted_for(browser_for, alice, mailcheck):
    html = browser_for(alice).get("/catalog?account=org:acme").content.decode()
    assert 'href="/catalog/apis/mailcheck?account=org:acme"' in html
    assert 'href="/keys?account=org:acme"' in html
    assert '<input type="hidden" name="account" value="org:acme">' in html


def test_an_outsider_cannot_act_for_an_organization_in_the_catalog(browser_for, alice, charlie):
    assert browser_for(charlie).get("/catalog?account=org:acme").status_code == 404


# --- An API's page -------------------------------------------------------------------------------


def test_an_api_page_lists_its_enabled_endpoints_with_their_prices(browser_for, alice, mailcheck):
    page = browser_for(alice).get("/catalog/apis/mailcheck")

    html = page.content.decode()
    assert [(ep.method, ep.path) for ep in page.context["endpoints"]] == [
        ("GET", "/v1/account"),
        ("GET", "/v1/domain/{domain}/emails"),
        ("POST", "/v1/verify"),
        ("POST", "/v1/write"),
    ]
    assert "$0.0025 per result" in html
    assert "$0.01 per call" in html
    assert "dynamic, per token" in html
    assert ">free<" in html
    assert "/v1/legacy" not in html
    assert 'href="/catalog/apis/mailcheck/GET/v1/domain/%7Bdomain%7D/emails"' in html
    assert 'href="https://docs.mailcheck.example"' in html
    assert "✓ Verified" in html


def test_an_api_page_describes_its_endpoints_in_plain_text(browser_for, alice, mailcheck):
    make_endpoint(
        mailcheck,
        "/v1/bulk",
        "POST",
        summary="",
        description="<p>Verifies <b>many</b> addresses &amp; reports each.</p>",
    )

    html = browser_for(alice).get("/catalog/apis/mailcheck").content.decode()

    assert "Verifies many addresses &amp; reports each." in html
    assert "&lt;p&gt;" not in html and "&lt;b&gt;" not in html


@pytest.mark.parametrize("slug", ["switched-off", "nowhere"])
def test_a_disabled_or_unknown_api_has_no_page(browser_for, alice, slug):
    api = make_provider_api("switched-off", enabled=False)
    make_endpoint(api, "/v1/search")
    assert browser_for(alice).get(f"/catalog/apis/{slug}").status_code == 404


# --- An endpoint's page --------------------------------------------------------------------------


def test_an_endpoint_page_describes_every_parameter(browser_for, alice, mailcheck):
    page = browser_for(alice).get(endpoint_url("mailcheck", "GET", "/v1/domain/{domain}/emails"))

    assert page.status_code == 200
    groups = {title: rows for title, rows in page.context["parameter_groups"]}
    assert list(groups) == ["Path parameters", "Query parameters"]
    domain, limit, kind = groups["Path parameters"] + groups["Query parameters"]
    assert (domain.name, domain.type, domain.required) == ("domain", "string", True)
    assert (limit.name, limit.type, limit.required) == ("limit", "integer", False)
    assert limit.description == "Most addresses to return"
    assert limit.constraints == "1 to 100; default 10"
    assert (kind.type, kind.description, kind.constraints) == (
        "string",
        "",
        "one of personal, generic",
    )
    html = page.content.decode()
    assert "<strong>Required</strong>" in html
    assert "Every address found for a company domain" in html


def test_an_endpoint_page_shows_body_parameters(browser_for, alice, mailcheck):
    page = browser_for(alice).get(endpoint_url("mailcheck", "POST", "/v1/verify"))
    ((title, rows),) = page.context["parameter_groups"]
    assert title == "Body parameters"
    assert (rows[0].name, rows[0].type, rows[0].required) == ("emails", "array of string", True)


def test_an_endpoint_page_explains_a_per_result_price(browser_for, alice, mailcheck):
    html = (
        browser_for(alice)
        .get(endpoint_url("mailcheck", "GET", "/v1/domain/{domain}/emails"))
        .content.decode()
    )
    assert 'data-figure="price">$0.0025<' in html
    assert "per result" in html
    assert (
        "$0.0025 per result, counted at data.emails in the response; the limit parameter bounds "
        "the results (10, the provider&#x27;s default, quoted when it is not given; at most 100)."
    ) in html


def test_an_endpoint_page_explains_a_per_token_price(browser_for, alice, mailcheck):
    html = browser_for(alice).get(endpoint_url("mailcheck", "POST", "/v1/write")).content.decode()
    assert 'data-figure="price">dynamic<' in html
    assert "per token" in html
    assert "$0.60 per million input tokens and $2.20 per million output tokens" in html


def test_an_endpoint_page_shows_the_integrate_snippets_of_every_format(
    browser_for, alice, mailcheck
):
    page = browser_for(alice).get(endpoint_url("mailcheck", "POST", "/v1/verify"))

    html = page.content.decode()
    expected = endpoint_integration(
        api_slug="mailcheck", path="/v1/verify", method="POST", format="all"
    )
    for name in FORMATS:
        assert f'<code id="snippet-{name}">{escape(expected["snippets"][name])}</code>' in html
        assert f'data-copy-target="snippet-{name}"' in html
    assert escape(expected["setup"]["sdk"]) in html
    assert "dashboard/copy.js" in html


def test_an_endpoint_off_the_payment_rails_shows_no_rail_snippets(browser_for, alice, mailcheck):
    html = browser_for(alice).get(endpoint_url("mailcheck", "GET", "/v1/account")).content.decode()
    assert 'id="snippet-curl"' in html
    assert 'id="snippet-x402-fetch"' not in html
    assert "not offered on the payment rails" in html


def test_a_disabled_endpoint_has_no_page(browser_for, alice, mailcheck):
    browser = browser_for(alice)
    assert browser.get(endpoint_url("mailcheck", "GET", "/v1/legacy")).status_code == 404
    assert browser.get(endpoint_url("mailcheck", "DELETE", "/v1/verify")).status_code == 404
    assert browser.get(endpoint_url("nowhere", "GET", "/v1/verify")).status_code == 404


# --- Search --------------------------------------------------------------------------------------


@pytest.fixture
def indexed(mailcheck, shotter):
    """The two APIs, embedded by the real model and searchable."""
    endpoint_embeddings_refresh()
    search_index_reset()
    yield
    search_index_reset()


def test_a_plain_language_search_finds_the_endpoint_grouped_by_api(browser_for, alice, indexed):
    page = browser_for(alice).get("/catalog/search", {"q": "is this email address deliverable"})

    results = page.context["results"]
    assert results[0]["slug"] == "mailcheck"
    best = results[0]["endpoints"][0]
    assert (best["method"], best["path"]) == ("POST", "/v1/verify")
    assert best["price_text"] == "$0.01 per call"
    assert page.context["close_match"] is True
    html = page.content.decode()
    assert f'href="{endpoint_url("mailcheck", "POST", "/v1/verify")}"' in html
    assert f'data-score="{best["score"]}"' in html
    assert "/v1/legacy" not in html
    assert html.index("MailCheck") < html.index("Shotter")


def test_search_shows_the_endpoints_of_several_apis(browser_for, alice, indexed):
    page = browser_for(alice).get("/catalog/search", {"q": "screenshot a web page"})
    slugs = [api["slug"] for api in page.context["results"]]
    assert slugs[0] == "shotter"
    assert set(slugs) == {"shotter", "mailcheck"}


def test_a_search_nothing_answers_says_what_to_try(browser_for, alice, indexed):
    html = (
        browser_for(alice)
        .get("/catalog/search", {"q": "purple elephants dancing"})
        .content.decode()
    )
    assert "No endpoint matches “purple elephants dancing” closely." in html
    assert "describing the task" in html


def test_an_empty_search_suggests_examples(browser_for, alice):
    html = browser_for(alice).get("/catalog/search", {"q": "   "}).content.decode()
    assert "Describe what you need in a few plain words" in html
    assert 'href="?q=screenshot+a+web+page"' in html


def test_a_search_of_an_empty_catalog_says_so(browser_for, alice):
    search_index_reset()
    html = browser_for(alice).get("/catalog/search", {"q": "verify an email"}).content.decode()
    assert "Nothing found for “verify an email”." in html


def test_a_search_longer_than_the_api_takes_is_refused(browser_for, alice):
    page = browser_for(alice).get("/catalog/search", {"q": "x" * 1001})
    assert page.context["results"] == []
    assert "at most 1000 characters" in page.content.decode()


def test_a_visitor_signs_in_to_search_and_comes_back_to_the_results(client, db):
    response = client.get("/catalog/search", {"q": "verify an email"})
    assert response.status_code == 302
    assert response["Location"] == "/login?next=/catalog/search%3Fq%3Dverify%2Ban%2Bemail"
