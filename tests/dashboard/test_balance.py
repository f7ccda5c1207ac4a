from credits.services.accounts import account_for_organization
from credits.services.holds import hold_reserve
from credits.services.ledger import credits_grant
from tests.dashboard.helpers import charge
from tests.factories import fund


def figure(page, name) -> str:
    html = page.content.decode()
    return html.split(f'data-figure="{name}">', 1)[1].split("<", 1)[0]


def test_the_balance_page_shows_available_held_and_total(browser_for, alice):
    account = fund(alice.user, 12_500_000)
    hold_reserve(account=account, amount_micros=2_000_000, request_id="run_pending")

    page = browser_for(alice).get("/balance")

    assert figure(page, "available") == "$10.50"
    assert figure(page, "held") == "$2.00"
    assert figure(page, "balance") == "$12.50"
    assert "run_pending" in page.content.decode()


def test_the_balance_page_lists_the_latest_transactions(browser_for, alice):
    account = fund(alice.user, 5_000_000)
    charge(account, 250_000, api="hunter")

    html = browser_for(alice).get("/balance").content.decode()

    assert "+$5.00" in html
    assert "-$0.25" in html
    assert "hunter /v2/domain-search" in html
    assert 'href="/transactions"' in html


def test_a_new_person_sees_a_zero_balance_and_what_to_do(browser_for, charlie):
    page = browser_for(charlie).get("/balance")
    assert figure(page, "available") == "$0.00"
    assert "No transactions yet" in page.content.decode()
    assert "test keys call the sandbox free of charge" in page.content.decode()


def test_a_member_sees_the_organizations_balance_in_its_context(browser_for, bob):
    org_account = account_for_organization(organization=bob.organization)
    credits_grant(account=org_account, amount_micros=40_000_000, reason="prepaid invoice 42")

    org_page = browser_for(bob).get("/balance?account=org:acme")
    personal_page = browser_for(bob).get("/balance")

    assert figure(org_page, "available") == "$40.00"
    assert "prepaid invoice 42" in org_page.content.decode()
    assert figure(personal_page, "available") == "$0.00"


def test_an_outsider_cannot_see_an_organizations_balance(browser_for, alice, charlie):
    assert browser_for(charlie).get("/balance?account=org:acme").status_code == 404
