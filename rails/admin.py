from django.contrib import admin

from gateway.money import format_usd
from rails.models import MppReplayKey, RailPayment, SettlementBatch


class ReadOnlyAdmin(admin.ModelAdmin):
    """Payments are written by the rails only; the admin reads them."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(RailPayment)
class RailPaymentAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "protocol",
        "network",
        "payer",
        "amount",
        "status",
        "endpoint",
        "request_id",
        "transaction",
    )
    list_filter = ("protocol", "status", "network")
    search_fields = ("payer", "nonce", "request_id", "transaction")
    date_hierarchy = "created_at"
    list_select_related = ("endpoint__api",)
    readonly_fields = [field.name for field in RailPayment._meta.fields]

    @admin.display(description="Amount", ordering="amount_micros")
    def amount(self, payment):
        return format_usd(payment.amount_micros)


@admin.register(SettlementBatch)
class SettlementBatchAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "batch_id",
        "network",
        "status",
        "payment_count",
        "amount",
        "transaction",
        "attempts",
    )
    list_filter = ("status",)
    search_fields = ("batch_id", "transaction")
    readonly_fields = [field.name for field in SettlementBatch._meta.fields]

    @admin.display(description="Amount", ordering="amount_micros")
    def amount(self, batch):
        return format_usd(batch.amount_micros)


@admin.register(MppReplayKey)
class MppReplayKeyAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "key", "expires_at")
    search_fields = ("key",)
    readonly_fields = [field.name for field in MppReplayKey._meta.fields]
