from django import forms
from django.contrib import admin, messages
from django.template.response import TemplateResponse

from credits.models import Account, Hold, LedgerEntry, Purchase, UsageEvent
from credits.services.ledger import GRANT_REASON_MAX_LENGTH, credits_grant, ledger_refund
from gateway.errors import ApiError
from gateway.money import format_usd, usd_to_micros


class ReadOnlyAdmin(admin.ModelAdmin):
    """The books are written by services only; the admin reads them."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class GrantCreditsForm(forms.Form):
    amount_usd = forms.CharField(label="Amount (USD)", help_text="for example 25 or 0.50")
    reason = forms.CharField(
        max_length=GRANT_REASON_MAX_LENGTH, help_text="shown in the account's transactions"
    )

    def clean_amount_usd(self):
        try:
            micros = usd_to_micros(self.cleaned_data["amount_usd"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        if micros <= 0:
            raise forms.ValidationError("The amount must be positive")
        return micros


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = [
        "__str__",
        "kind",
        "balance",
        "pending_receipts",
        "held",
        "available",
        "created_at",
    ]
    list_filter = ["kind"]
    search_fields = ["user__email", "organization__slug", "organization__name"]
    list_select_related = ["user", "organization"]
    actions = ["grant_credits"]

    def get_queryset(self, request):
        return super().get_queryset(request).with_balance()

    @admin.display(description="balance")
    def balance(self, account):
        return format_usd(account.balance_micros)

    @admin.display(description="waiting for the roll-up")
    def pending_receipts(self, account):
        return format_usd(account.pending_receipts_micros)

    @admin.display(description="held", ordering="held_micros")
    def held(self, account):
        return format_usd(account.held_micros)

    @admin.display(description="available")
    def available(self, account):
        return format_usd(account.available_micros)

    @admin.action(description="Grant credits to the selected accounts")
    def grant_credits(self, request, queryset):
        accounts = list(queryset.exclude(kind=Account.Kind.PLATFORM))
        form = GrantCreditsForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            for account in accounts:
                credits_grant(
                    account=account,
                    amount_micros=form.cleaned_data["amount_usd"],
                    reason=form.cleaned_data["reason"],
                )
            messages.success(
                request,
                f"Granted {format_usd(form.cleaned_data['amount_usd'])} to "
                f"{len(accounts)} account(s).",
            )
            return None
        return TemplateResponse(
            request,
            "admin/credits/grant_credits.html",
            {
                **self.admin_site.each_context(request),
                "title": "Grant credits",
                "form": form,
                "accounts": accounts,
                "opts": self.model._meta,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "type",
        "amount",
        "balance_after",
        "description",
        "event_ref",
    ]
    list_filter = ["type", "account__kind", "rolled_up"]
    search_fields = [
        "event_ref",
        "description",
        "account__user__email",
        "account__organization__slug",
    ]
    list_select_related = ["account__user", "account__organization"]
    date_hierarchy = "created_at"
    actions = ["refund"]

    @admin.display(description="amount", ordering="amount_micros")
    def amount(self, entry):
        return format_usd(entry.amount_micros)

    @admin.display(description="balance after")
    def balance_after(self, entry):
        # A receipt was booked without its account's lock: no balance after it is known.
        if entry.balance_after_micros is None:
            return "receipt"
        return format_usd(entry.balance_after_micros)

    @admin.action(description="Refund the selected API calls")
    def refund(self, request, queryset):
        for entry in queryset:
            try:
                ledger_refund(entry=entry, reason=f"refunded by {request.user}")
            except ApiError as error:
                messages.error(request, f"{entry.event_ref}: {error.message}")
            else:
                messages.success(
                    request, f"Refunded {format_usd(-entry.amount_micros)} ({entry.event_ref})"
                )


@admin.register(Hold)
class HoldAdmin(ReadOnlyAdmin):
    list_display = [
        "request_id",
        "account",
        "status",
        "amount_micros",
        "captured_micros",
        "created_at",
        "expires_at",
        "settled_at",
    ]
    list_filter = ["status"]
    search_fields = ["request_id"]
    list_select_related = ["account__user", "account__organization"]


@admin.register(UsageEvent)
class UsageEventAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "request_id",
        "account",
        "api_slug",
        "path",
        "method",
        "status",
        "mode",
        "cost_micros",
        "latency_ms",
    ]
    list_filter = ["status", "mode"]
    search_fields = ["request_id", "api_slug", "path"]
    list_select_related = ["account__user", "account__organization"]
    date_hierarchy = "created_at"


@admin.register(Purchase)
class PurchaseAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "method",
        "amount",
        "refunded",
        "disputed",
        "reference",
        "payment_reference",
    ]
    list_filter = ["method"]
    search_fields = ["reference", "payment_reference", "account__user__email"]
    list_select_related = ["account__user", "account__organization"]
    date_hierarchy = "created_at"

    @admin.display(description="amount")
    def amount(self, purchase):
        return format_usd(purchase.amount_micros)

    @admin.display(description="refunded")
    def refunded(self, purchase):
        return format_usd(purchase.refunded_micros)

    @admin.display(description="disputed")
    def disputed(self, purchase):
        return format_usd(purchase.disputed_micros)
