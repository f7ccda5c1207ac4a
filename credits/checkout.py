"""Stripe at the credits' edge, through the official SDK: opening a Checkout session that sells
an amount of credits, finding the session of a payment, and reading the webhook events Stripe
signs. Nothing here touches the database.

Every session this gateway opens carries ``metadata.purpose`` (the Stripe account may sell other
things too) and names the account it credits in ``client_reference_id``, so a webhook event is
booked from its own content, without looking anyone up by email.
"""

import json
from dataclasses import dataclass

import stripe
from django.conf import settings

from gateway.errors import InvalidRequest
from gateway.money import MICROS_PER_CENT

PURPOSE = "gateway-credits"
# Stripe answers in well under a second; a person waits on the page meanwhile.
TIMEOUT_SECONDS = 20
# What the card statement and the Checkout page call the product.
PRODUCT_NAME = "API Gateway credits"


class StripeUnavailable(Exception):
    """Stripe refused the request or could not be reached."""


@dataclass(frozen=True)
class CheckoutSession:
    id: str
    url: str


def card_payments_missing_settings() -> list[str]:
    """The settings card payments still need (none: they are on)."""
    return [
        name
        for name in ("STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET")
        if not getattr(settings, name)
    ]


def _client() -> stripe.StripeClient:
    return stripe.StripeClient(
        settings.STRIPE_SECRET_KEY,
        base_addresses={"api": settings.STRIPE_API_BASE},
        http_client=stripe.RequestsClient(timeout=TIMEOUT_SECONDS),
        # A retried create carries the SDK's idempotency key, so it never opens two sessions.
        max_network_retries=1,
    )


def checkout_session_create(
    *,
    account_id: int,
    amount_micros: int,
    success_url: str,
    cancel_url: str,
    customer_email: str = "",
) -> CheckoutSession:
    """A Checkout session selling ``amount_micros`` of credits (whole cents) to the account."""
    metadata = {"purpose": PURPOSE, "account": str(account_id)}
    params = {
        "mode": "payment",
        "line_items": [
            {
                "price_data": {
                    "currency": "usd",
                    "unit_amount": amount_micros // MICROS_PER_CENT,
                    "product_data": {"name": PRODUCT_NAME},
                },
                "quantity": 1,
            }
        ],
        "client_reference_id": str(account_id),
        "metadata": metadata,
        # Refunds and disputes name the PaymentIntent; its metadata says whose it was too.
        "payment_intent_data": {"metadata": metadata},
        "success_url": success_url,
        "cancel_url": cancel_url,
    }
    if customer_email:
        params["customer_email"] = customer_email
    try:
        session = _client().v1.checkout.sessions.create(params=params)
    except stripe.StripeError as error:
        raise StripeUnavailable(error.user_message or str(error)) from error
    return CheckoutSession(id=session.id, url=session.url)


def checkout_session_for_payment(*, payment_intent: str) -> dict | None:
    """The Checkout session that created a PaymentIntent, as the webhook would carry it; None
    when no session did."""
    try:
        sessions = _client().v1.checkout.sessions.list(
            params={"payment_intent": payment_intent, "limit": 1}
        )
    except stripe.StripeError as error:
        raise StripeUnavailable(error.user_message or str(error)) from error
    return sessions.data[0].to_dict() if sessions.data else None


def checkout_event_verify(*, payload: bytes, signature: str | None) -> dict:
    """The event Stripe signed, as a plain dict, or InvalidRequest (HTTP 400) when the
    signature does not verify with STRIPE_WEBHOOK_SECRET or was made more than five minutes
    ago (the SDK's tolerance, against a delivery captured and replayed later)."""
    try:
        stripe.Webhook.construct_event(payload, signature, settings.STRIPE_WEBHOOK_SECRET)
    except stripe.SignatureVerificationError as error:
        raise InvalidRequest(f"The Stripe signature does not verify: {error}") from None
    except ValueError:
        raise InvalidRequest("The body is not a JSON Stripe event") from None
    return json.loads(payload)
