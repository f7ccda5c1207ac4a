from django.urls import path

from credits.apis import (
    CreditsBalanceApi,
    CreditsCheckApi,
    CreditsStripeWebhookApi,
    CreditsTransactionsApi,
    CreditsUsageApi,
)

urlpatterns = [
    path("v1/credits/balance", CreditsBalanceApi.as_view(), name="credits-balance"),
    path("v1/credits/check", CreditsCheckApi.as_view(), name="credits-check"),
    path("v1/credits/usage", CreditsUsageApi.as_view(), name="credits-usage"),
    path("v1/credits/transactions", CreditsTransactionsApi.as_view(), name="credits-transactions"),
    # Outside /v1: Stripe, not a key holder, calls it.
    path("webhooks/stripe", CreditsStripeWebhookApi.as_view(), name="credits-stripe-webhook"),
]
