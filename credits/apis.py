import logging

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from credits import checkout
from credits.models import Account
from credits.selectors import (
    account_has_overdue_holds,
    ledger_entries_for_account,
    usage_events_in_window,
    usage_window_totals,
)
from credits.services.accounts import account_for_owner
from credits.services.holds import holds_expire
from credits.services.purchases import card_event_handle
from gateway.errors import ApiError, NotFound
from gateway.inputs import (
    DigitsDecimalField,
    DigitsIntegerField,
    RequestBodySerializer,
    query_string,
)
from gateway.money import cents_to_micros, format_usd, micros_to_cents
from gateway.pagination import offset_field

logger = logging.getLogger("credits")


class StripeUnreachable(ApiError):
    status_code = 503
    code = "PAYMENT_UNAVAILABLE"
    default_message = "Stripe could not be reached; deliver the event again later"


def _account_of(request) -> Account:
    key = request.auth
    account = account_for_owner(user_id=key.user_id, organization_id=key.organization_id)
    if account_has_overdue_holds(account=account):
        holds_expire(account=account)
        account.refresh_from_db()
    return account


def _validated(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class PaginationSerializer(serializers.Serializer):
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    count = serializers.IntegerField(help_text="items in this page")


class CreditsUsageEventSerializer(serializers.Serializer):
    api = serializers.CharField(source="api_slug")
    path = serializers.CharField()
    method = serializers.CharField()
    timestamp = serializers.DateTimeField(source="created_at")
    cost = serializers.SerializerMethodField()
    status = serializers.CharField()
    requestId = serializers.CharField(source="request_id")

    def get_cost(self, event) -> str:
        return format_usd(event.cost_micros)


class CreditsTransactionSerializer(serializers.Serializer):
    id = serializers.SerializerMethodField()
    type = serializers.CharField()
    amountCents = serializers.SerializerMethodField()
    description = serializers.CharField()
    timestamp = serializers.DateTimeField(source="created_at")
    metadata = serializers.JSONField()

    def get_id(self, entry) -> str:
        return f"txn_{entry.pk}"

    def get_amountCents(self, entry) -> float:
        return micros_to_cents(entry.amount_micros)


class CreditsUsagePaginationSerializer(PaginationSerializer):
    total = serializers.IntegerField(help_text="events in the time window")


class CreditsBalanceApi(APIView):
    class CreditsBalanceOutputSerializer(serializers.Serializer):
        success = serializers.BooleanField()
        balance = serializers.CharField(
            help_text='Available dollars ("$12.50"): the balance minus pending holds'
        )

    @extend_schema(
        operation_id="credits_balance",
        summary="Available credit balance",
        description="A user key reads the user's balance; an organization key reads the "
        "organization's account (its provider revenue).",
        responses=CreditsBalanceOutputSerializer,
    )
    def get(self, request):
        account = _account_of(request)
        return Response({"success": True, "balance": format_usd(account.available_micros)})


AMOUNT_CENTS_PRECISION = (
    "Give at most 4 decimal places (a micro-dollar) and 12 digits before the decimal point."
)


class CreditsCheckApi(APIView):
    class CreditsCheckInputSerializer(RequestBodySerializer):
        # A JSON number (the contract's type); a numeric string is read too.
        # DRF checks the digits in total before the decimals, so a float's tail (0.1 + 0.2 =
        # 0.30000000000000004) would be told about "16 digits in total"; both say what is allowed.
        amountCents = DigitsDecimalField(
            max_digits=16,
            decimal_places=4,
            min_value=0,
            coerce_to_string=False,
            help_text="cents, to 4 decimal places (a micro-dollar); 100 = one dollar",
            error_messages={
                "max_digits": AMOUNT_CENTS_PRECISION,
                "max_decimal_places": AMOUNT_CENTS_PRECISION,
                "max_whole_digits": AMOUNT_CENTS_PRECISION,
            },
        )

    class CreditsCheckOutputSerializer(serializers.Serializer):
        success = serializers.BooleanField()
        sufficient = serializers.BooleanField()
        balanceCents = serializers.FloatField()
        requiredCents = serializers.FloatField()
        shortfallCents = serializers.FloatField()

    @extend_schema(
        operation_id="credits_check",
        summary="Whether the balance covers an amount",
        request=CreditsCheckInputSerializer,
        responses=CreditsCheckOutputSerializer,
    )
    def post(self, request):
        data = _validated(self.CreditsCheckInputSerializer, request.data)
        required = cents_to_micros(data["amountCents"])
        available = _account_of(request).available_micros
        return Response(
            {
                "success": True,
                "sufficient": available >= required,
                "balanceCents": micros_to_cents(available),
                "requiredCents": micros_to_cents(required),
                "shortfallCents": micros_to_cents(max(required - available, 0)),
            }
        )


class CreditsUsageApi(APIView):
    class CreditsUsageQuerySerializer(serializers.Serializer):
        limit = DigitsIntegerField(default=50, min_value=1, max_value=200)
        offset = offset_field()
        days = DigitsIntegerField(default=30, min_value=1, max_value=365)

    class CreditsUsageOutputSerializer(serializers.Serializer):
        success = serializers.BooleanField()
        usage = CreditsUsageEventSerializer(many=True)
        totalSpent = serializers.CharField(help_text="dollars spent in the window")
        pagination = CreditsUsagePaginationSerializer()

    @extend_schema(
        operation_id="credits_usage",
        summary="Usage history, newest first",
        parameters=[CreditsUsageQuerySerializer],
        responses=CreditsUsageOutputSerializer,
    )
    def get(self, request):
        params = _validated(self.CreditsUsageQuerySerializer, query_string(request))
        limit, offset = params["limit"], params["offset"]
        events = usage_events_in_window(account=_account_of(request), days=params["days"])
        total, spent = usage_window_totals(events=events)
        page = events[offset : offset + limit]
        usage = CreditsUsageEventSerializer(page, many=True).data
        return Response(
            {
                "success": True,
                "usage": usage,
                "totalSpent": format_usd(spent),
                "pagination": {
                    "limit": limit,
                    "offset": offset,
                    "count": len(usage),
                    "total": total,
                },
            }
        )


class CreditsTransactionsApi(APIView):
    class CreditsTransactionsQuerySerializer(serializers.Serializer):
        limit = DigitsIntegerField(default=50, min_value=1, max_value=200)
        offset = offset_field()

    class CreditsTransactionsOutputSerializer(serializers.Serializer):
        success = serializers.BooleanField()
        transactions = CreditsTransactionSerializer(many=True)
        pagination = PaginationSerializer()

    @extend_schema(
        operation_id="credits_transactions",
        summary="Ledger entries of the account, newest first",
        parameters=[CreditsTransactionsQuerySerializer],
        responses=CreditsTransactionsOutputSerializer,
    )
    def get(self, request):
        params = _validated(self.CreditsTransactionsQuerySerializer, query_string(request))
        limit, offset = params["limit"], params["offset"]
        entries = ledger_entries_for_account(account=_account_of(request))
        page = entries[offset : offset + limit]
        transactions = CreditsTransactionSerializer(page, many=True).data
        return Response(
            {
                "success": True,
                "transactions": transactions,
                "pagination": {"limit": limit, "offset": offset, "count": len(transactions)},
            }
        )


class CreditsStripeWebhookApi(APIView):
    """``POST /webhooks/stripe``: Stripe's signed events about purchases by card. No gateway
    key: the Stripe-Signature header, made with STRIPE_WEBHOOK_SECRET, is the credential, and a
    body it does not sign is a 400. A paid Checkout session books its purchase, a refund or a
    dispute takes it back; a delivery repeated or out of order books each once. A 503 (Stripe
    could not be asked about an event that needs it) makes Stripe deliver the event again."""

    authentication_classes = []
    permission_classes = []
    throttle_classes = []

    @extend_schema(exclude=True)
    def post(self, request):
        if checkout.card_payments_missing_settings():
            raise NotFound("Card payments are not set up on this gateway")
        event = checkout.checkout_event_verify(
            payload=request.body, signature=request.headers.get("Stripe-Signature")
        )
        try:
            outcome = card_event_handle(event=event)
        except checkout.StripeUnavailable as error:
            raise StripeUnreachable(
                f"Stripe could not be asked about this event: {error}"
            ) from None
        logger.info("Stripe event %s (%s): %s", event.get("id"), event.get("type"), outcome)
        return Response({"success": True, "received": event.get("id"), "outcome": outcome})
