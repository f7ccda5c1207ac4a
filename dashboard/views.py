"""Pages for people. Every page acts for one account: the person's own, or, with
``?account=org:<slug>``, one of the organizations they belong to (see ``AccountContext``)."""

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_safe

from catalog.sdk import sdk_tarball_name
from catalog.selectors import (
    endpoint_details,
    endpoint_integration,
    endpoint_price_texts,
    endpoint_search,
    provider_api_to_browse,
    provider_apis_to_browse,
)
from credits.models import Account
from credits.selectors import (
    account_has_overdue_holds,
    holds_pending_for_account,
    ledger_entries_for_account,
    revenue_by_api,
    usage_api_slugs,
    usage_daily_totals,
    usage_events_for_account,
    usage_window_start,
    usage_window_totals,
)
from credits.services.accounts import account_for_organization, account_for_user
from credits.services.holds import holds_expire
from dashboard.charts import spend_chart
from dashboard.downloads import sdk_tarball
from dashboard.forms import (
    ApiKeyCreateForm,
    CatalogFilterForm,
    CatalogSearchForm,
    SignUpForm,
    UsageFilterForm,
)
from dashboard.services import (
    SIGNUP_LINK_MAX_AGE,
    SignUpAlreadyConfirmed,
    SignUpLinkRefused,
    sign_up_confirm,
    sign_up_start,
)
from dashboard.signin import email_wait_seconds, too_many_emails_message
from gateway.errors import NotFound
from gateway.models import ApiKey, Membership, Organization, User
from gateway.money import format_usd
from gateway.selectors import (
    api_keys_for_organization,
    api_keys_for_user,
    memberships_for_user,
    organization_members,
    organization_role_may_manage_keys,
)
from gateway.services import api_key_create, api_key_revoke

PAGE_SIZE = 25
RECENT_ROWS = 10
OVERVIEW_DAYS = 7
# The secret of a key just created waits here for the one page that shows it, which pops it.
NEW_KEY_SESSION_KEY = "dashboard:new_api_key"


@dataclass(frozen=True)
class AccountContext:
    """Whose keys and money a page shows: the signed-in person's, or one of their organizations'.

    It travels in the URL (``?account=org:<slug>``; nothing or ``personal`` for one's own), so
    a link or a bookmark always shows the same account and two tabs cannot act for each other.
    """

    user: User
    membership: Membership | None = None

    @property
    def organization(self) -> Organization | None:
        return self.membership.organization if self.membership else None

    @property
    def is_organization(self) -> bool:
        return self.membership is not None

    @property
    def param(self) -> str:
        return f"org:{self.organization.slug}" if self.membership else "personal"

    @property
    def query(self) -> str:
        """The query string that keeps this context on a link ("" for one's own account)."""
        return f"?account={self.param}" if self.membership else ""

    @property
    def label(self) -> str:
        return self.organization.name if self.membership else "Personal"

    @property
    def may_manage_keys(self) -> bool:
        if self.membership is None:
            return True
        return organization_role_may_manage_keys(role=self.membership.role)


def user_memberships(request: HttpRequest) -> list[Membership]:
    """The signed-in person's memberships, read once per request (the navigation needs them too)."""
    if not hasattr(request, "_dashboard_memberships"):
        request._dashboard_memberships = memberships_for_user(user=request.user)
    return request._dashboard_memberships


def _membership_for_user(request: HttpRequest, slug: str) -> Membership:
    for membership in user_memberships(request):
        if membership.organization.slug == slug:
            return membership
    # Someone else's organization looks exactly like one that does not exist.
    raise Http404("No such organization")


def _get_account_context_for_user(request: HttpRequest) -> AccountContext:
    value = request.GET.get("account", "").strip()
    if value in ("", "personal"):
        return AccountContext(user=request.user)
    kind, _, slug = value.partition(":")
    if kind != "org" or not slug:
        raise Http404("No such account")
    return AccountContext(user=request.user, membership=_membership_for_user(request, slug))


def _get_api_key_for_user(request: HttpRequest, key_id: int) -> tuple[ApiKey, AccountContext]:
    api_key = ApiKey.objects.select_related("organization").filter(pk=key_id).first()
    if api_key is not None and api_key.user_id == request.user.pk:
        return api_key, AccountContext(user=request.user)
    if api_key is not None and api_key.organization_id:
        membership = _membership_for_user(request, api_key.organization.slug)
        return api_key, AccountContext(user=request.user, membership=membership)
    raise Http404("No such key")


def _account_for_context(context: AccountContext) -> Account:
    if context.is_organization:
        account = account_for_organization(organization=context.organization)
    else:
        account = account_for_user(user=context.user)
    # Like the balance API, a read sweeps the account's overdue holds so they stop counting.
    if account_has_overdue_holds(account=account):
        holds_expire(account=account)
        account.refresh_from_db()
    return account


def _require_key_management(context: AccountContext) -> None:
    if not context.may_manage_keys:
        raise PermissionDenied(
            f"Only owners of {context.organization.name} can create or revoke its keys. "
            "Ask an owner, or use a personal key."
        )


def _keys_url(context: AccountContext) -> str:
    return reverse("dashboard:keys") + context.query


def _page(request: HttpRequest, items):
    return Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))


# --- Home and sign-up ----------------------------------------------------------------------


def home(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return render(request, "dashboard/landing.html")
    context = _get_account_context_for_user(request)
    account = _account_for_context(context)
    events = usage_events_for_account(account=account, since=usage_window_start(days=OVERVIEW_DAYS))
    calls, spent = usage_window_totals(events=events)
    keys = _keys_of(context)
    return render(
        request,
        "dashboard/home.html",
        {
            "section": "home",
            "account_context": context,
            "account": account,
            "active_keys": sum(1 for key in keys if not key.is_revoked),
            "days": OVERVIEW_DAYS,
            "calls": calls,
            "spent_micros": spent,
            "chart": spend_chart(usage_daily_totals(events=events, days=OVERVIEW_DAYS)),
            "recent_events": events[:5],
        },
    )


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Every valid request answers the same page, whether or not the address has an account: the
    mail says which (dashboard.services.sign_up_start)."""
    if request.user.is_authenticated:
        return redirect("dashboard:home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        email = form.cleaned_data["email"]
        wait = email_wait_seconds(
            purpose="signup",
            email=email,
            client_address=request.META.get("REMOTE_ADDR", ""),
            per_address=settings.SIGNUP_EMAILS_PER_ADDRESS_PER_HOUR,
            per_client=settings.SIGNUP_EMAILS_PER_CLIENT_PER_HOUR,
        )
        if wait:
            form.add_error(None, too_many_emails_message(what="sign-up", wait_seconds=wait))
            return render(request, "registration/signup.html", {"form": form}, status=429)
        sign_up_start(email=email, password=form.cleaned_data["password1"])
        return redirect("dashboard:signup-sent")
    return render(request, "registration/signup.html", {"form": form})


@require_safe
def signup_sent(request: HttpRequest) -> HttpResponse:
    return render(request, "registration/signup_sent.html", {"days": SIGNUP_LINK_MAX_AGE.days})


# GET only: a mail scanner that checks links with HEAD must not use the link up.
@require_GET
def signup_confirm(request: HttpRequest, token: str) -> HttpResponse:
    """The mailed link: it opens the account and signs its owner in, once."""
    try:
        user = sign_up_confirm(token=token)
    except SignUpAlreadyConfirmed as refusal:
        messages.info(request, str(refusal))
        return redirect("dashboard:login")
    except SignUpLinkRefused as refusal:
        messages.error(request, str(refusal))
        return redirect("dashboard:signup")
    # Whoever follows the link reads the mailbox the account is for: no password to check.
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    trial = settings.SIGNUP_CREDITS_MICROS
    messages.success(
        request,
        f"Welcome! Your account is ready with {format_usd(trial)} of trial credits: "
        "create a key to start."
        if trial
        else "Welcome! Your account is ready: create a key to start.",
    )
    return redirect("dashboard:home")


# --- Keys ----------------------------------------------------------------------------------


def _keys_of(context: AccountContext) -> list[ApiKey]:
    if context.is_organization:
        return list(api_keys_for_organization(organization=context.organization))
    return list(api_keys_for_user(user=context.user))


@login_required
def keys(request: HttpRequest) -> HttpResponse:
    context = _get_account_context_for_user(request)
    # A secret whose page was never shown (the redirect was not followed) must not linger in
    # the session store: from here it can no longer be displayed anyway.
    request.session.pop(NEW_KEY_SESSION_KEY, None)
    return render(
        request,
        "dashboard/keys.html",
        {"section": "keys", "account_context": context, "keys": _keys_of(context)},
    )


@login_required
@require_http_methods(["GET", "POST"])
def key_create(request: HttpRequest) -> HttpResponse:
    context = _get_account_context_for_user(request)
    _require_key_management(context)
    form = ApiKeyCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        owner = (
            {"organization": context.organization}
            if context.is_organization
            else {"user": request.user}
        )
        api_key, secret = api_key_create(
            mode=form.cleaned_data["mode"], name=form.cleaned_data["name"], **owner
        )
        request.session[NEW_KEY_SESSION_KEY] = {"id": api_key.pk, "secret": secret}
        return redirect(reverse("dashboard:key-created") + context.query)
    return render(
        request,
        "dashboard/key_create.html",
        {"section": "keys", "account_context": context, "form": form},
    )


@login_required
@never_cache
def key_created(request: HttpRequest) -> HttpResponse:
    """Shows a new key's secret once: it is popped from the session, so a reload shows nothing."""
    pending = request.session.pop(NEW_KEY_SESSION_KEY, None)
    if pending is None:
        messages.info(
            request,
            "A key's secret is shown only once, right after it is created. If you did not copy "
            "it, revoke that key and create a new one.",
        )
        return redirect(_keys_url(_get_account_context_for_user(request)))
    api_key, context = _get_api_key_for_user(request, pending["id"])
    return render(
        request,
        "dashboard/key_created.html",
        {
            "section": "keys",
            "account_context": context,
            "api_key": api_key,
            "secret": pending["secret"],
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def key_revoke(request: HttpRequest, key_id: int) -> HttpResponse:
    api_key, context = _get_api_key_for_user(request, key_id)
    _require_key_management(context)
    if request.method == "POST":
        if not api_key.is_revoked:
            api_key_revoke(api_key=api_key)
            messages.success(
                request,
                f"The key “{api_key.name or api_key.masked}” is revoked: "
                "calls made with it are refused from now on.",
            )
        return redirect(_keys_url(context))
    return render(
        request,
        "dashboard/key_revoke.html",
        {"section": "keys", "account_context": context, "api_key": api_key},
    )


# --- Money ---------------------------------------------------------------------------------


@login_required
def balance(request: HttpRequest) -> HttpResponse:
    context = _get_account_context_for_user(request)
    account = _account_for_context(context)
    return render(
        request,
        "dashboard/balance.html",
        {
            "section": "balance",
            "account_context": context,
            "account": account,
            "holds": list(holds_pending_for_account(account=account)[:RECENT_ROWS]),
            "entries": list(ledger_entries_for_account(account=account)[:RECENT_ROWS]),
        },
    )


@login_required
def usage(request: HttpRequest) -> HttpResponse:
    context = _get_account_context_for_user(request)
    account = _account_for_context(context)
    data = request.GET.copy()
    data.setdefault("days", str(UsageFilterForm.base_fields["days"].empty_value))
    form = UsageFilterForm(data, api_slugs=usage_api_slugs(account=account))
    filters = form.filters()
    events = usage_events_for_account(
        account=account,
        since=usage_window_start(days=filters["days"]),
        api_slug=filters["api"],
        status=filters["status"],
    )
    calls, spent = usage_window_totals(events=events)
    return render(
        request,
        "dashboard/usage.html",
        {
            "section": "usage",
            "account_context": context,
            "form": form,
            "filters": filters,
            "is_filtered": bool(filters["api"] or filters["status"]),
            "calls": calls,
            "spent_micros": spent,
            "chart": spend_chart(usage_daily_totals(events=events, days=filters["days"])),
            "page_obj": _page(request, events),
        },
    )


@login_required
def transactions(request: HttpRequest) -> HttpResponse:
    context = _get_account_context_for_user(request)
    account = _account_for_context(context)
    return render(
        request,
        "dashboard/transactions.html",
        {
            "section": "transactions",
            "account_context": context,
            "page_obj": _page(request, ledger_entries_for_account(account=account)),
        },
    )


# --- Organizations -------------------------------------------------------------------------


@login_required
def organizations(request: HttpRequest) -> HttpResponse:
    memberships = user_memberships(request)
    if len(memberships) == 1:
        return redirect("dashboard:organization", slug=memberships[0].organization.slug)
    return render(
        request,
        "dashboard/organizations.html",
        {"section": "organization", "memberships": memberships},
    )


@login_required
def organization(request: HttpRequest, slug: str) -> HttpResponse:
    membership = _membership_for_user(request, slug)
    context = AccountContext(user=request.user, membership=membership)
    account = _account_for_context(context)
    revenue = revenue_by_api(account=account)
    return render(
        request,
        "dashboard/organization.html",
        {
            "section": "organization",
            "account_context": context,
            "organization": membership.organization,
            "members": organization_members(organization=membership.organization),
            "account": account,
            "revenue": revenue,
            "revenue_total_micros": sum(row.revenue_micros for row in revenue),
        },
    )


# --- Catalog -------------------------------------------------------------------------------
# Visitors may browse the catalog (the list, the API and endpoint pages): it is public
# documentation, and the landing page invites them to see what a call costs before signing up.
# Searching needs an account: each search runs the embedding model on the server, and a page
# without a key has nothing to rate-limit it by.

SEARCH_RESULTS = 10
# Below this, the best match of a search is probably not an answer: needs that nothing in the
# catalog answers keep their top score under 0.3, most of them under 0.1 (docs/search.md).
CLOSE_MATCH_SCORE = 0.25
SEARCH_EXAMPLES = [
    "find the work email of a person at a company",
    "is this email address deliverable",
    "screenshot a web page",
    "search job listings by country",
]
SNIPPET_TITLES = {
    "gw-sdk": "JavaScript, with the gateway SDK",
    "run-api": "Python, POST /v1/run with requests",
    "curl": "curl",
    "x402-fetch": "JavaScript, paying with @x402/fetch",
    "x402-python": "Python, paying with x402",
}
RAIL_FORMATS = ("x402-fetch", "x402-python")


@dataclass(frozen=True)
class ParameterRow:
    name: str
    type: str
    required: bool
    description: str
    constraints: str


def _parameter_rows(params: list[dict]) -> list[ParameterRow]:
    """A catalog parameter record as a table row (records may lack any key but the name)."""
    rows = []
    for param in params:
        kind = param.get("type") or "string"
        if kind == "array" and param.get("items"):
            kind = f"array of {param['items']}"
        if param.get("format"):
            kind = f"{kind} ({param['format']})"
        constraints = []
        if param.get("enum"):
            constraints.append("one of " + ", ".join(str(value) for value in param["enum"]))
        if param.get("minimum") is not None and param.get("maximum") is not None:
            constraints.append(f"{param['minimum']} to {param['maximum']}")
        elif param.get("minimum") is not None:
            constraints.append(f"at least {param['minimum']}")
        elif param.get("maximum") is not None:
            constraints.append(f"at most {param['maximum']}")
        if param.get("default") is not None:
            constraints.append(f"default {param['default']}")
        rows.append(
            ParameterRow(
                name=str(param.get("name", "")),
                type=kind,
                required=bool(param.get("required")),
                description=str(param.get("description") or ""),
                constraints="; ".join(constraints),
            )
        )
    return rows


def _catalog_context(request: HttpRequest) -> dict:
    """Catalog pages act for no account, but a signed-in person's links keep the one in the URL."""
    context = {"section": "catalog"}
    if request.user.is_authenticated:
        context["account_context"] = _get_account_context_for_user(request)
    return context


def catalog(request: HttpRequest) -> HttpResponse:
    form = CatalogFilterForm(request.GET)
    filters = form.filters()
    return render(
        request,
        "dashboard/catalog.html",
        {
            **_catalog_context(request),
            "form": form,
            "search_form": CatalogSearchForm(),
            "is_filtered": filters["verified"] is not None,
            "page_obj": _page(request, provider_apis_to_browse(verified=filters["verified"])),
        },
    )


@login_required
def catalog_search(request: HttpRequest) -> HttpResponse:
    form = CatalogSearchForm(request.GET)
    prompt = form.cleaned_data["q"] if form.is_valid() else ""
    results = endpoint_search(prompt=prompt, limit=SEARCH_RESULTS) if prompt else []
    hits = [endpoint for api in results for endpoint in api["endpoints"]]
    price_texts = endpoint_price_texts(endpoint_ids=[int(hit["id"]) for hit in hits])
    for hit in hits:
        hit["price_text"] = price_texts.get(int(hit["id"]), hit["price"])
    best_score = max((hit["score"] for hit in hits), default=0.0)
    return render(
        request,
        "dashboard/catalog_search.html",
        {
            **_catalog_context(request),
            "form": form,
            "prompt": prompt,
            "results": results,
            "count": len(hits),
            "close_match": best_score >= CLOSE_MATCH_SCORE,
            "examples": SEARCH_EXAMPLES,
        },
    )


def catalog_api(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        api, endpoints = provider_api_to_browse(slug=slug)
    except NotFound:
        raise Http404("No such API") from None
    return render(
        request,
        "dashboard/catalog_api.html",
        {
            **_catalog_context(request),
            "api": api,
            "endpoints": endpoints,
        },
    )


def catalog_endpoint(request: HttpRequest, slug: str, method: str, path: str) -> HttpResponse:
    try:
        details = endpoint_details(api_slug=slug, path=path, method=method)
        integration = endpoint_integration(api_slug=slug, path=path, format="all", method=method)
    except NotFound:
        raise Http404("No such endpoint") from None
    endpoint = details["endpoint"]
    snippets = [
        {"format": name, "title": SNIPPET_TITLES.get(name, name), "code": code}
        for name, code in integration["snippets"].items()
    ]
    return render(
        request,
        "dashboard/catalog_endpoint.html",
        {
            **_catalog_context(request),
            "api": details["api"],
            "endpoint": endpoint,
            "usage": details["usage"],
            "parameter_groups": [
                (title, _parameter_rows(endpoint[key]))
                for title, key in (
                    ("Path parameters", "pathParams"),
                    ("Query parameters", "queryParams"),
                    ("Body parameters", "bodyParams"),
                )
                if endpoint[key]
            ],
            "gateway_snippets": [item for item in snippets if item["format"] not in RAIL_FORMATS],
            "rail_snippets": [item for item in snippets if item["format"] in RAIL_FORMATS],
            "setup": integration["setup"],
        },
    )


# --- Downloads -----------------------------------------------------------------------------
# Public, like the catalog pages: the gw-sdk snippets' set-up installs the SDK from here.


@require_safe
def download(request: HttpRequest, name: str) -> HttpResponse:
    if name != sdk_tarball_name():
        raise Http404("No such download")
    response = HttpResponse(sdk_tarball(), content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


FAVICON = Path(__file__).resolve().parent / "static" / "dashboard" / "favicon.ico"


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers ask for on every page whatever the page names."""
    response = HttpResponse(FAVICON.read_bytes(), content_type="image/x-icon")
    response["Cache-Control"] = "public, max-age=86400"
    return response
