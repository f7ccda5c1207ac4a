"""Stripe's webhook events as Stripe sends them: JSON bodies signed with the endpoint's secret
in the Stripe-Signature header (``t=<unix time>,v1=<HMAC-SHA256 of "<t>.<body>">``), and the
Checkout session the dashboard's page opens, as Stripe's API answers it."""

import hashlib
import hmac
import itertools
import json
import time

WEBHOOK_SECRET = "whsec_test_credits_0123456789abcdef"
SECRET_KEY = "sk_test_credits_0123456789abcdef"
STRIPE_API = "https://api.stripe.com"

_ids = itertools.count(1)


def stripe_settings(settings) -> None:
    settings.STRIPE_SECRET_KEY = SECRET_KEY
    settings.STRIPE_WEBHOOK_SECRET = WEBHOOK_SECRET
    settings.STRIPE_API_BASE = STRIPE_API


def signed(
    event: dict, *, secret: str = WEBHOOK_SECRET, at: int | None = None
) -> tuple[bytes, str]:
    """The body of a delivery and its Stripe-Signature header."""
    body = json.dumps(event).encode()
    timestamp = int(time.time()) if at is None else at
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return body, f"t={timestamp},v1={digest.hexdigest()}"


def deliver(client, event: dict, **signing):
    """POST one delivery of ``event`` to the webhook, as Stripe does (``client``: Django's test
    client, or a ``requests`` module bound to a live server by ``deliver_live``)."""
    body, signature = signed(event, **signing)
    return client.post(
        "/webhooks/stripe",
        body,
        content_type="application/json",
        headers={"Stripe-Signature": signature},
    )


def deliver_live(base_url: str, event: dict, **signing):
    import requests

    body, signature = signed(event, **signing)
    return requests.post(
        f"{base_url}/webhooks/stripe",
        data=body,
        headers={"Content-Type": "application/json", "Stripe-Signature": signature},
        timeout=30,
    )


def event(kind: str, subject: dict) -> dict:
    return {
        "id": f"evt_test_{next(_ids)}",
        "object": "event",
        "api_version": "2025-01-27.acacia",
        "created": int(time.time()),
        "livemode": False,
        "type": kind,
        "data": {"object": subject},
    }


def session(
    account_id: int,
    *,
    cents: int = 1000,
    session_id: str = "cs_test_a1",
    payment_intent: str = "pi_test_1",
    payment_status: str = "paid",
    purpose: str = "gateway-credits",
) -> dict:
    """A Checkout session as Stripe describes it once paid (or not yet, for slow methods)."""
    return {
        "id": session_id,
        "object": "checkout.session",
        "mode": "payment",
        "status": "complete",
        "payment_status": payment_status,
        "amount_total": cents,
        "currency": "usd",
        "client_reference_id": str(account_id),
        "metadata": {"purpose": purpose, "account": str(account_id)},
        "payment_intent": payment_intent,
        "url": None,
    }


def completed(account_id: int, **fields) -> dict:
    return event("checkout.session.completed", session(account_id, **fields))


def refunded(*, cents: int, payment_intent: str = "pi_test_1", amount: int = 1000) -> dict:
    return event(
        "charge.refunded",
        {
            "id": "ch_test_1",
            "object": "charge",
            "amount": amount,
            "amount_refunded": cents,
            "currency": "usd",
            "payment_intent": payment_intent,
            "refunded": cents == amount,
        },
    )


def disputed(*, cents: int, payment_intent: str = "pi_test_1", dispute_id: str = "dp_1") -> dict:
    return event(
        "charge.dispute.created",
        {
            "id": dispute_id,
            "object": "dispute",
            "amount": cents,
            "currency": "usd",
            "charge": "ch_test_1",
            "payment_intent": payment_intent,
            "status": "needs_response",
        },
    )


def created_session(session_id: str = "cs_test_a1") -> dict:
    """Stripe's answer to POST /v1/checkout/sessions."""
    return {
        "id": session_id,
        "object": "checkout.session",
        "mode": "payment",
        "status": "open",
        "payment_status": "unpaid",
        "url": f"https://checkout.stripe.com/c/pay/{session_id}#fidkdWxOYHwnPyd1blpxYHZxWjA0",
    }
