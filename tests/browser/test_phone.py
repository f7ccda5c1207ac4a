"""The dashboard on a phone (390 px wide, an iPhone's viewport): every page fits the screen, the
spend chart opens on today's bar, and the newest calls show their status and cost."""

import pytest
import requests
from django.utils import timezone
from playwright.sync_api import expect

from credits.models import UsageEvent
from tests.browser.test_dashboard import sign_in
from tests.factories import fund, make_persona

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
PAGES = ["/", "/usage", "/transactions", "/balance", "/keys", "/catalog"]


def _box_within(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
    )


def _page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.fixture
def phone(open_browser):
    page = open_browser("phone")
    page.set_viewport_size(PHONE)
    return page


def test_a_signed_in_phone_sees_every_page_fit_with_the_latest_data(gateway, phone):
    persona = make_persona("pat@example.com")
    fund(persona.user, 5_000_000)
    run = requests.post(
        f"{gateway}/v1/run",
        headers={"Authorization": f"Bearer {persona.live_key}"},
        json={"api": "hunter", "path": "/v2/domain-search", "query": {"domain": "stripe.com"}},
        timeout=30,
    )
    assert run.status_code == 200, run.text
    called_at = UsageEvent.objects.get(request_id=run.json()["requestId"]).created_at
    sign_in(phone, "pat@example.com", "correct horse battery staple")

    for path in PAGES:
        phone.goto(path)
        assert _page_width(phone) <= PHONE["width"], f"{path} scrolls sideways"

    phone.goto("/usage")
    scroller = phone.locator(".chart-scroll").bounding_box()
    today = phone.locator(f'g.chart-bar[data-day="{timezone.localdate(called_at):%Y-%m-%d}"]')
    assert float(today.locator("rect.bar").get_attribute("height")) > 0
    assert _box_within(today.locator("rect.hit").bounding_box(), scroller), "today's bar is hidden"

    newest = phone.get_by_role("table", name="Calls, newest first").locator("tbody tr").first
    screen = {"x": 0, "width": PHONE["width"]}
    for label, text in (("Status", "Completed"), ("Cost", "$0.025")):
        cell = newest.locator(f'td[data-label="{label}"]')
        expect(cell).to_contain_text(text)
        assert _box_within(cell.bounding_box(), screen), f"{label} is off the screen"

    phone.goto("/transactions")
    amount = phone.locator('td[data-label="Amount"]').first
    assert _box_within(amount.bounding_box(), screen)


def test_a_visitor_on_a_phone_sees_the_sign_up_button_with_room_around_its_text(gateway, phone):
    phone.goto("/")
    button = phone.get_by_role("navigation", name="Main").get_by_role("link", name="Sign up")
    padding = button.evaluate("element => parseFloat(getComputedStyle(element).paddingLeft)")
    assert padding >= 8
    box = button.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    assert _page_width(phone) <= PHONE["width"]
