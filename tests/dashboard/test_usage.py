from datetime import timedelta

from django.utils import timezone

from credits.services.accounts import account_for_organization, account_for_user
from tests.dashboard.helpers import record_call


def bar(page, day) -> dict:
    """The chart's bar for a day, read from the SVG: its title and height."""
    html = page.content.decode()
    group = html.split(f'data-day="{day:%Y-%m-%d}"', 1)[1].split("</g>", 1)[0]
    title = group.split("<title>", 1)[1].split("</title>", 1)[0]
    height = float(group.split('class="bar"', 1)[1].split('height="', 1)[1].split('"', 1)[0])
    return {"title": title, "height": height}


def figure(page, name) -> str:
    return page.content.decode().split(f'data-figure="{name}">', 1)[1].split("<", 1)[0]


def test_a_call_today_shows_as_a_bar_for_today(browser_for, alice):
    account = account_for_user(user=alice.user)
    record_call(account, cost=50_000)
    record_call(account, cost=25_000)

    page = browser_for(alice).get("/usage")

    today = timezone.localdate()
    assert bar(page, today)["height"] > 0
    assert bar(page, today)["title"].endswith(": $0.075 over 2 calls")
    assert bar(page, today - timedelta(days=1)) == {
        "title": f"{today - timedelta(days=1):%a %d %b %Y}: $0.00 over 0 calls",
        "height": 0.0,
    }
    assert figure(page, "calls") == "2"
    assert figure(page, "spend") == "$0.075"


def test_the_chart_has_a_bar_for_every_day_of_the_chosen_window(browser_for, alice):
    browser = browser_for(alice)
    for days in (7, 30, 90):
        page = browser.get(f"/usage?days={days}")
        assert page.content.decode().count('class="chart-bar"') == days
        assert page.context["filters"]["days"] == days


def test_a_window_leaves_out_older_calls(browser_for, alice):
    account = account_for_user(user=alice.user)
    record_call(account, cost=10_000, days_ago=1)
    record_call(account, cost=70_000, days_ago=20)

    browser = browser_for(alice)
    week = browser.get("/usage?days=7")
    month = browser.get("/usage?days=30")

    assert (figure(week, "calls"), figure(week, "spend")) == ("1", "$0.01")
    assert (figure(month, "calls"), figure(month, "spend")) == ("2", "$0.08")
    assert browser.get("/usage?days=12").context["filters"]["days"] == 30


def test_the_table_lists_each_calls_details(browser_for, alice):
    account = account_for_user(user=alice.user)
    event = record_call(
        account, api="clearbit", path="/v1/companies/find", method="POST", status="failed", cost=0
    )

    html = browser_for(alice).get("/usage").content.decode()

    for text in ("clearbit", "/v1/companies/find", "POST", "Failed", "$0.00", event.request_id):
        assert text in html


def test_filters_by_api_and_status_narrow_the_table_totals_and_chart(browser_for, alice):
    account = account_for_user(user=alice.user)
    record_call(account, api="hunter", status="completed", cost=20_000)
    record_call(account, api="hunter", status="failed", cost=0)
    record_call(account, api="clearbit", status="completed", cost=30_000)

    browser = browser_for(alice)
    by_api = browser.get("/usage?api=hunter")
    by_both = browser.get("/usage?api=hunter&status=completed")
    by_status = browser.get("/usage?status=completed")

    assert {event.api_slug for event in by_api.context["page_obj"]} == {"hunter"}
    assert (figure(by_api, "calls"), figure(by_api, "spend")) == ("2", "$0.02")
    assert bar(by_api, timezone.localdate())["title"].endswith("$0.02 over 2 calls")
    assert [event.status for event in by_both.context["page_obj"]] == ["completed"]
    assert (figure(by_status, "calls"), figure(by_status, "spend")) == ("2", "$0.05")
    assert '<option value="clearbit">' in by_api.content.decode()


def test_an_unknown_filter_value_falls_back_to_all_calls(browser_for, alice):
    account = account_for_user(user=alice.user)
    record_call(account)

    page = browser_for(alice).get("/usage?status=exploded")

    assert figure(page, "calls") == "1"
    assert "Select a valid choice" in page.content.decode()


def test_no_matching_calls_says_so(browser_for, alice):
    record_call(account_for_user(user=alice.user), api="hunter")
    html = browser_for(alice).get("/usage?status=rejected").content.decode()
    assert "No calls match these filters" in html


def test_no_calls_at_all_says_what_to_do_next(browser_for, charlie):
    html = browser_for(charlie).get("/usage").content.decode()
    assert "No calls yet" in html
    assert "POST /v1/run" in html


def test_calls_are_paginated_and_pages_keep_the_filters(browser_for, alice):
    account = account_for_user(user=alice.user)
    for _ in range(30):
        record_call(account, api="hunter")
    record_call(account, api="clearbit")

    browser = browser_for(alice)
    first = browser.get("/usage?api=hunter")
    second = browser.get("/usage?api=hunter&page=2")

    assert len(first.context["page_obj"]) == 25
    assert 'href="?api=hunter&amp;page=2"' in first.content.decode()
    assert len(second.context["page_obj"]) == 5
    assert all(event.api_slug == "hunter" for event in second.context["page_obj"])


def test_the_organization_context_shows_the_organizations_calls(browser_for, bob):
    record_call(account_for_organization(organization=bob.organization), api="org-api")
    record_call(account_for_user(user=bob.user), api="bobs-api")

    html = browser_for(bob).get("/usage?account=org:acme").content.decode()

    assert "org-api" in html
    assert "bobs-api" not in html
    assert '<input type="hidden" name="account" value="org:acme">' in html


def test_an_outsider_cannot_see_an_organizations_usage(browser_for, alice, charlie):
    assert browser_for(charlie).get("/usage?account=org:acme").status_code == 404
