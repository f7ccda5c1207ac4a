from credits.services.accounts import account_for_user
from tests.dashboard.helpers import record_call
from tests.factories import fund


def test_a_visitor_gets_a_landing_page_with_sign_up_and_a_curl_example(client, db):
    html = client.get("/").content.decode()

    assert 'href="/signup"' in html
    assert 'href="/login"' in html
    assert "curl -s http://127.0.0.1:8000/v1/whoami" in html
    assert "Sign out" not in html


def test_a_signed_in_person_gets_their_overview(browser_for, alice):
    account = fund(alice.user, 7_000_000)
    record_call(account, api="hunter", cost=120_000)

    page = browser_for(alice).get("/")
    html = page.content.decode()

    assert page.context["active_keys"] == 2
    assert "$7.00" in html
    assert "$0.12" in html
    assert "hunter" in html
    assert 'class="chart-bar"' in html


def test_an_overview_without_calls_says_what_to_do_next(browser_for, charlie):
    account_for_user(user=charlie.user)
    html = browser_for(charlie).get("/").content.decode()
    assert "No calls in the last 7 days" in html
    assert "POST /v1/run" in html


def test_the_navigation_links_docs_and_admin_for_staff_only(browser_for, alice, charlie):
    charlie.user.is_staff = True
    charlie.user.save(update_fields=["is_staff"])

    alices = browser_for(alice).get("/").content.decode()
    charlies = browser_for(charlie).get("/").content.decode()

    assert 'href="/docs"' in alices
    assert 'href="/admin/"' not in alices
    assert 'href="/admin/"' in charlies


def test_navigation_links_keep_the_organization_context(browser_for, alice):
    html = browser_for(alice).get("/?account=org:acme").content.decode()
    for path in ("/keys", "/balance", "/usage", "/transactions"):
        assert f'href="{path}?account=org:acme"' in html
    assert 'href="/orgs/acme"' in html
