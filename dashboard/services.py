"""Writes the dashboard's pages make beyond those of the kernel and the credits services."""

from django.conf import settings
from django.db import transaction

from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.models import User
from gateway.services import user_create


def user_sign_up(*, email: str, password: str) -> User:
    """A person signing up, with the trial credits of SIGNUP_CREDITS_USD (none by default).

    One transaction, so an account never exists without the credits it was promised; the grant's
    idempotency reference books it once per person whatever retries the page sees."""
    with transaction.atomic():
        user = user_create(email=email, password=password)
        if settings.SIGNUP_CREDITS_MICROS:
            credits_grant(
                account=account_for_user(user=user),
                amount_micros=settings.SIGNUP_CREDITS_MICROS,
                reason="Sign-up credits",
                idempotency_ref=f"signup-{user.pk}",
            )
    return user
