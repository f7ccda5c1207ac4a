"""Pages that buy credits: "Add credits" (a card payment through Stripe Checkout, and how to pay
in USDC on the x402 rail) and a purchase's receipt.

The page never books anything: it opens a Checkout session and sends the person to Stripe, and
the credits arrive with Stripe's signed webhook event (credits.services.purchases), a few
seconds after the payment. Anyone adds credits to their own balance; to an organization's, its
owners do, as they manage its keys.
"""

from decimal import Decimal
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from credits.checkout import (
    StripeUnavailable,
    card_payments_missing_settings,
    checkout_session_create,
)
from credits.models import Purchase
from credits.selectors import purchase_entries, purchase_with_owner
from credits.services.purchases import (
    PURCHASE_MAX_MICROS,
    PURCHASE_MIN_MICROS,
    PURCHASE_PRESETS_MICROS,
)
from dashboard.views import (
    AccountContext,
    _account_for_context,
    _get_account_context_for_user,
    _membership_for_user,
)
from gateway.money import MICROS_PER_USD, format_usd, usd_to_micros


class CreditsPurchaseForm(forms.Form):
    """An amount of credits in dollars and cents, within the purchase bounds."""

    amount = forms.DecimalField(
        label="Amount (USD)",
        min_value=Decimal(PURCHASE_MIN_MICROS) / MICROS_PER_USD,
        max_value=Decimal(PURCHASE_MAX_MICROS) / MICROS_PER_USD,
        max_digits=7,
        decimal_places=2,
        help_text=f"From {format_usd(PURCHASE_MIN_MICROS)} to {format_usd(PURCHASE_MAX_MICROS)}.",
        widget=forms.NumberInput(attrs={"step": "0.01", "inputmode": "decimal"}),
    )

    def amount_micros(self) -> int:
        return usd_to_micros(self.cleaned_data["amount"])


USDC_SNIPPET = """# pip install 'x402[evm,requests]'
import os

from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import x402_requests
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

client = x402ClientSync()
register_exact_evm_client(client, EthAccountSigner(Account.from_key(os.environ["PRIVATE_KEY"])))
# The client pays at most $1 at a time unless told otherwise.
client.set_spend_controls({{"max_amount_per_payment": "$10"}})
answer = x402_requests(client).post(
    "{url}",
    json={{"amountCents": 1000}},  # $10.00
    headers={{"Authorization": f"Bearer {{os.environ['GATEWAY_API_KEY']}}"}},
)
print(answer.status_code, answer.json())
"""


def may_buy_credits(context: AccountContext) -> bool:
    return context.may_manage_keys


def _return_url(context: AccountContext, name: str, **params) -> str:
    """An address on this gateway to come back to from Stripe, in the same account context."""
    if context.is_organization:
        params["account"] = context.param
    query = f"?{urlencode(params)}" if params else ""
    return f"{settings.GATEWAY_BASE_URL}{reverse(name)}{query}"


@login_required
@require_http_methods(["GET", "POST"])
def credits_add(request: HttpRequest) -> HttpResponse:
    context = _get_account_context_for_user(request)
    may_buy = may_buy_credits(context)
    missing = card_payments_missing_settings()
    form = CreditsPurchaseForm(request.POST or None)
    if request.method == "POST" and not may_buy:
        raise PermissionDenied(
            f"Only owners of {context.organization.name} can add credits to its balance."
        )
    # Without Stripe's settings the page offers no card payment and says why, whatever is posted.
    if request.method == "POST" and not missing and form.is_valid():
        account = _account_for_context(context)
        try:
            session = checkout_session_create(
                account_id=account.pk,
                amount_micros=form.amount_micros(),
                success_url=_return_url(context, "dashboard:balance", purchase="card"),
                cancel_url=_return_url(context, "dashboard:credits-add", cancelled="1"),
                customer_email=request.user.email,
            )
        except StripeUnavailable as error:
            form.add_error(
                None,
                f"The card payment could not be started ({error}). Nothing was charged; "
                "try again in a moment.",
            )
        else:
            # 303: the browser follows with a GET to Stripe's hosted page.
            response = redirect(session.url)
            response.status_code = 303
            return response
    return render(
        request,
        "dashboard/credits_add.html",
        {
            "section": "balance",
            "account_context": context,
            "may_buy": may_buy,
            "card_missing_settings": missing,
            "form": form,
            "presets": [Decimal(micros) / MICROS_PER_USD for micros in PURCHASE_PRESETS_MICROS],
            "cancelled": request.GET.get("cancelled") == "1",
            "min_micros": PURCHASE_MIN_MICROS,
            "max_micros": PURCHASE_MAX_MICROS,
            "rails_enabled": settings.RAILS_ENABLED,
            "purchase_url": f"{settings.X402_URL}/credits/purchase",
            "usdc_snippet": USDC_SNIPPET.format(url=f"{settings.X402_URL}/credits/purchase"),
        },
    )


def _get_purchase_for_user(
    request: HttpRequest, purchase_id: int
) -> tuple[Purchase, AccountContext]:
    purchase = purchase_with_owner(purchase_id=purchase_id)
    if purchase is not None:
        account = purchase.account
        if account.user_id is not None and account.user_id == request.user.pk:
            return purchase, AccountContext(user=request.user)
        if account.organization_id is not None:
            membership = _membership_for_user(request, account.organization.slug)
            return purchase, AccountContext(user=request.user, membership=membership)
    # Someone else's purchase looks exactly like one that does not exist.
    raise Http404("No such purchase")


@login_required
def purchase_receipt(request: HttpRequest, purchase_id: int) -> HttpResponse:
    purchase, context = _get_purchase_for_user(request, purchase_id)
    return render(
        request,
        "dashboard/purchase_receipt.html",
        {
            "section": "balance",
            "account_context": context,
            "purchase": purchase,
            "entries": list(purchase_entries(purchase=purchase)),
        },
    )
