from credits.models import LedgerEntry
from credits.services.accounts import account_for_organization, account_for_user
from credits.services.ledger import ledger_refund
from gateway.models import Membership, Organization
from gateway.services import membership_add, organization_create
from tests.dashboard.helpers import charge
from tests.factories import fund


def figure(page, name) -> str:
    return page.content.decode().split(f'data-figure="{name}">', 1)[1].split("<", 1)[0]


def test_the_organization_page_lists_members_with_their_roles(browser_for, alice, bob):
    page = browser_for(bob).get("/orgs/acme")

    assert page.status_code == 200
    members = [(m.user.email, m.role) for m in page.context["members"]]
    assert members == [("alice@example.com", "owner"), ("bob@example.com", "member")]
    html = page.content.decode()
    assert "alice@example.com</td><td>Owner" in html
    assert "bob@example.com</td><td>Member" in html


def test_the_organization_page_shows_revenue_per_api(browser_for, alice, bob, charlie, settings):
    settings.PLATFORM_FEE_BPS = 1000
    acme = account_for_organization(organization=alice.organization)
    caller = fund(charlie.user, 10_000_000)
    charge(caller, 1_000_000, provider=acme, api="hunter")
    charge(caller, 500_000, provider=acme, api="hunter")
    charge(caller, 200_000, provider=acme, api="clearbit")

    page = browser_for(alice).get("/orgs/acme")

    revenue = [(row.api, row.calls, row.revenue_micros) for row in page.context["revenue"]]
    assert revenue == [("hunter", 2, 1_350_000), ("clearbit", 1, 180_000)]
    assert figure(page, "revenue") == "$1.53"
    assert figure(page, "balance") == "$1.53"
    assert "$1.35" in page.content.decode()


def test_a_refunded_call_comes_off_its_apis_revenue(browser_for, alice, charlie, settings):
    settings.PLATFORM_FEE_BPS = 1000
    acme = account_for_organization(organization=alice.organization)
    caller = fund(charlie.user, 10_000_000)
    charge(caller, 1_000_000, provider=acme, api="hunter")
    refunded = charge(caller, 1_000_000, provider=acme, api="hunter")
    ledger_refund(
        entry=LedgerEntry.objects.get(event_ref=f"call:{refunded}", type="api_call"),
        reason="upstream error",
    )

    page = browser_for(alice).get("/orgs/acme")

    assert [(r.api, r.revenue_micros) for r in page.context["revenue"]] == [("hunter", 900_000)]


def test_an_organization_without_revenue_says_so(browser_for, alice):
    html = browser_for(alice).get("/orgs/acme").content.decode()
    assert "No revenue yet" in html


def test_an_outsider_gets_404_for_an_organization_page(browser_for, alice, charlie):
    assert browser_for(charlie).get("/orgs/acme").status_code == 404
    assert browser_for(charlie).get("/orgs/nowhere").status_code == 404


def test_the_organizations_link_goes_straight_to_a_persons_only_organization(browser_for, bob):
    assert browser_for(bob).get("/orgs")["Location"] == "/orgs/acme"


def test_a_person_in_several_organizations_chooses_one(browser_for, alice):
    organization_create(name="Globex", slug="globex", owner=alice.user)
    html = browser_for(alice).get("/orgs").content.decode()
    assert 'href="/orgs/acme"' in html and 'href="/orgs/globex"' in html


def test_the_navigation_shows_organization_only_to_members(browser_for, bob, charlie):
    assert ">Organization</a>" in browser_for(bob).get("/keys").content.decode()
    assert ">Organization</a>" not in browser_for(charlie).get("/keys").content.decode()


def test_the_switcher_offers_each_organization_of_the_person(browser_for, alice, charlie):
    other = Organization.objects.create(name="Initech", slug="initech")
    membership_add(organization=other, user=alice.user, role=Membership.Role.MEMBER)
    account_for_user(user=alice.user)

    html = browser_for(alice).get("/keys?account=org:initech").content.decode()

    assert '<option value="org:acme">Acme (owner)</option>' in html
    assert '<option value="org:initech" selected>Initech (member)</option>' in html
    assert "switcher" not in browser_for(charlie).get("/keys").content.decode()
