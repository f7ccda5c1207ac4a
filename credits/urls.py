from django.urls import path

from credits.apis import (
    CreditsBalanceApi,
    CreditsCheckApi,
    CreditsTransactionsApi,
    CreditsUsageApi,
)

urlpatterns = [
    path("v1/credits/balance", CreditsBalanceApi.as_view(), name="credits-balance"),
    path("v1/credits/check", CreditsCheckApi.as_view(), name="credits-check"),
    path("v1/credits/usage", CreditsUsageApi.as_view(), name="credits-usage"),
    path("v1/credits/transactions", CreditsTransactionsApi.as_view(), name="credits-transactions"),
]
