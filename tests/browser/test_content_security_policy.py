"""Every kind of page works under the Content-Security-Policy in a real browser: the dashboard, the
admin and the API docs render their content with no policy violation and no console error."""

import pytest
import requests
from playwright.sync_api import expect

from gateway.models import User
from tests.browser.test_dashboard import sign_in
from tests.factories import fund, make_persona

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"

# Reports each violation to the test as the browser sees it, on every page the browser opens.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(
    `${event.effectiveDirective} blocked ${event.blockedURI || "inline"} ` +
    `at ${event.sourceFile}:${event.lineNumber}`
  );
});
"""


class Watched:
    """A browser page whose policy violations, console errors and uncaught exceptions are kept."""

    def __init__(self, page):
        self.page = page
        self.problems: list[str] = []
        page.expose_binding(
            "reportViolation", lambda source, text: self.problems.append(f"violation: {text}")
        )
        page.add_init_script(REPORT_VIOLATIONS)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"exception: {error}"))

    def _console(self, message) -> None:
        if message.type == "error":
            self.problems.append(f"console: {message.text}")

    def visit(self, path: str):
        response = self.page.goto(path)
        assert response.status == 200, f"{path} answered {response.status}"
        policy = response.header_value("content-security-policy") or ""
        assert "default-src 'self'" in policy, f"{path} has no policy"
        return self.page

    def settle(self) -> list[str]:
        """The problems seen so far, once the page has finished loading what it loads."""
        self.page.wait_for_load_state("networkidle")
        return self.problems


@pytest.fixture
def watched(open_browser):
    return lambda name: Watched(open_browser(name))


def test_a_visitor_sees_the_public_pages_and_the_api_docs_without_a_violation(gateway, watched):
    visitor = watched("visitor")

    expect(visitor.visit("/").get_by_role("link", name="Create an account")).to_be_visible()
    expect(visitor.visit("/login").get_by_role("button", name="Sign in")).to_be_visible()
    expect(visitor.visit("/signup").get_by_role("button", name="Create account")).to_be_visible()
    page = visitor.visit("/catalog")
    expect(page.get_by_role("table", name="APIs in the catalog")).to_contain_text("Hunter")
    page = visitor.visit("/catalog/apis/hunter")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Hunter")
    page = visitor.visit("/catalog/apis/hunter/GET/v2/domain-search")
    expect(page.get_by_role("heading", level=1)).to_contain_text("GET /v2/domain-search")
    # The copy buttons are shown by the page's script, so a blocked script would leave them hidden.
    expect(page.get_by_role("button", name="Copy the curl snippet")).to_be_visible()

    page = visitor.visit("/docs")
    # Swagger UI builds the operations list from /v1/openapi.json with its scripts.
    expect(page.locator(".opblock-summary-path", has_text="/v1/search").first).to_be_visible()
    expect(page.locator(".opblock").first).to_be_visible()

    assert visitor.settle() == []


def test_a_customer_sees_every_dashboard_page_without_a_violation(gateway, watched):
    persona = make_persona("pat@example.com")
    fund(persona.user, 5_000_000)
    run = requests.post(
        f"{gateway}/v1/run",
        headers={"Authorization": f"Bearer {persona.live_key}"},
        json={"api": "hunter", "path": "/v2/domain-search", "query": {"domain": "stripe.com"}},
        timeout=30,
    )
    assert run.status_code == 200, run.text
    customer = watched("customer")
    sign_in(customer.page, "pat@example.com", PASSWORD)

    page = customer.visit("/")
    expect(page.get_by_role("region", name="Available balance")).to_contain_text("$4.975")
    page = customer.visit("/keys")
    expect(page.get_by_role("cell", name="live", exact=True)).to_be_visible()
    page = customer.visit("/balance")
    expect(page.locator('[data-figure="available"]')).to_have_text("$4.975")
    page = customer.visit("/transactions")
    expect(page.get_by_role("table", name="Transactions")).to_contain_text("test funds")
    page = customer.visit("/usage")
    expect(page.get_by_role("table", name="Calls, newest first")).to_contain_text("hunter")
    expect(page.locator("svg.spend-chart")).to_be_visible()
    page = customer.visit("/catalog/search?q=find+the+email+address+of+a+person")
    expect(page.locator("section.result").first).to_be_visible()

    # A new key's page copies the secret with its script.
    customer.visit("/keys/new")
    page.get_by_label("Name").fill("laptop")
    page.get_by_role("button", name="Create key").click()
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()

    assert customer.settle() == []


def test_an_operator_uses_the_admin_without_a_violation(gateway, watched):
    fund(make_persona("pat@example.com").user, 1_000_000)
    User.objects.create_superuser(email="operator@example.com", password=PASSWORD)
    operator = watched("operator")

    page = operator.visit("/admin/")
    page.get_by_label("Email").fill("operator@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Site administration")).to_be_visible()

    page = operator.visit("/admin/credits/account/?q=pat%40example.com")
    expect(page.get_by_role("checkbox", name="Select this object for an action")).to_have_count(1)
    # The change list's actions run on the admin's scripts: selecting a row counts it.
    page.get_by_role("checkbox", name="Select this object for an action").check()
    expect(page.locator(".action-counter")).to_contain_text("1 of 1 selected")
    page = operator.visit("/admin/gateway/user/")
    expect(page.locator("#result_list")).to_contain_text("pat@example.com")
    page.locator("#result_list a", has_text="pat@example.com").click()
    expect(page.get_by_role("heading", level=2, name="pat@example.com")).to_be_visible()

    assert operator.settle() == []
