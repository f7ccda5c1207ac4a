from credits.models import LedgerEntry
from credits.selectors import ApiRevenue, revenue_by_api
from credits.services.accounts import account_for_organization
from credits.services.ledger import credits_grant, ledger_refund
from tests.dashboard.helpers import charge
from tests.factories import fund


def test_revenue_is_grouped_by_the_api_of_each_charged_call(
    alice, charlie, settings, django_assert_num_queries
):
    settings.PLATFORM_FEE_BPS = 2000
    acme = account_for_organization(organization=alice.organization)
    caller = fund(charlie.user, 10_000_000)
    charge(caller, 100_000, provider=acme, api="weather")
    charge(caller, 300_000, provider=acme, api="geocode")
    charge(caller, 100_000, provider=acme, api="weather")

    with django_assert_num_queries(1):
        revenue = revenue_by_api(account=acme)

    assert revenue == [ApiRevenue("geocode", 1, 240_000), ApiRevenue("weather", 2, 160_000)]


def test_a_refund_reduces_its_apis_revenue_but_a_callers_own_refund_does_not(
    alice, charlie, settings
):
    settings.PLATFORM_FEE_BPS = 0
    acme = account_for_organization(organization=alice.organization)
    caller = fund(charlie.user, 10_000_000)
    charge(caller, 100_000, provider=acme, api="weather")
    refunded = charge(caller, 100_000, provider=acme, api="weather")
    ledger_refund(
        entry=LedgerEntry.objects.get(event_ref=f"call:{refunded}", type="api_call"),
        reason="upstream error",
    )
    # Acme also called someone else's API and got that refunded: a positive refund leg.
    credits_grant(account=acme, amount_micros=1_000_000, reason="top-up")
    own_call = charge(acme, 50_000, api="translate")
    ledger_refund(
        entry=LedgerEntry.objects.get(event_ref=f"call:{own_call}", type="api_call"),
        reason="bad answer",
    )

    assert revenue_by_api(account=acme) == [ApiRevenue("weather", 2, 100_000)]


def test_an_account_without_revenue_has_no_rows(charlie):
    assert revenue_by_api(account=fund(charlie.user, 1_000_000)) == []
