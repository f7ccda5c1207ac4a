from credits.models import LedgerEntry
from credits.services.accounts import account_for_organization
from credits.services.ledger import credits_grant
from tests.dashboard.helpers import charge
from tests.factories import fund


def test_transactions_list_type_amount_description_and_time(browser_for, alice):
    account = fund(alice.user, 3_000_000)
    charge(account, 1_500, api="clearbit", path="/v1/companies/find")

    page = browser_for(alice).get("/transactions")
    html = page.content.decode()

    entries = list(page.context["page_obj"])
    assert [entry.type for entry in entries] == [LedgerEntry.Type.API_CALL, LedgerEntry.Type.GRANT]
    assert "API call" in html and "Grant" in html
    assert "-$0.0015" in html
    assert "+$3.00" in html
    assert "clearbit /v1/companies/find" in html
    assert "test funds" in html
    assert entries[0].created_at.strftime("%Y-%m-%dT%H:%M") in html


def test_transactions_are_paginated_25_to_a_page(browser_for, alice):
    account = fund(alice.user, 100_000_000)
    for _ in range(29):
        charge(account, 1_000)

    browser = browser_for(alice)
    first = browser.get("/transactions")
    second = browser.get("/transactions?page=2")

    assert len(first.context["page_obj"]) == 25
    assert "Page 1 of 2" in first.content.decode()
    assert 'href="?page=2"' in first.content.decode()
    assert len(second.context["page_obj"]) == 5
    assert second.context["page_obj"][4].type == LedgerEntry.Type.GRANT
    assert browser.get("/transactions?page=nonsense").context["page_obj"].number == 1


def test_the_organization_context_lists_the_organizations_entries(browser_for, bob):
    account = account_for_organization(organization=bob.organization)
    credits_grant(account=account, amount_micros=9_000_000, reason="team top-up")

    html = browser_for(bob).get("/transactions?account=org:acme").content.decode()

    assert "team top-up" in html
    assert "team top-up" not in browser_for(bob).get("/transactions").content.decode()


def test_no_transactions_says_how_to_start(browser_for, charlie):
    html = browser_for(charlie).get("/transactions").content.decode()
    assert "No transactions yet" in html
    assert 'href="/keys"' in html


def test_an_outsider_cannot_list_an_organizations_transactions(browser_for, alice, charlie):
    assert browser_for(charlie).get("/transactions?account=org:acme").status_code == 404
