"""Writes the dashboard's pages make beyond those of the kernel and the credits services."""

import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.core import signing
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from dashboard.models import PendingSignUp
from gateway.models import User

# How long a mailed confirmation link works, as long as Django's password-reset links do.
SIGNUP_LINK_MAX_AGE = timedelta(days=3)
SIGNUP_LINK_SALT = "dashboard.signup-confirm"


class SignUpLinkRefused(Exception):
    """A confirmation link that opens no account; the message says what to do instead."""


class SignUpAlreadyConfirmed(SignUpLinkRefused):
    """The link's address has an account: the link was followed before, or the account was made
    another way since."""


def sign_up_start(*, email: str, password: str) -> None:
    """Someone asks for an account: a new address is mailed a confirmation link, an address with
    an account is mailed that it has one. Both do the same work (the password hash, the lookups,
    one mail), so neither the page nor its timing tells whether the address has an account.

    ``email`` is normalized (``dashboard.forms.normalized_email``)."""
    now = timezone.now()
    password_hash = make_password(password)
    PendingSignUp.objects.filter(created_at__lt=now - SIGNUP_LINK_MAX_AGE).delete()
    if User.objects.filter(email__iexact=email).exists():
        _mail(email=email, template="signup_exists", context={})
        return
    nonce = secrets.token_urlsafe(16)
    PendingSignUp.objects.bulk_create(
        [PendingSignUp(email=email, password=password_hash, nonce=nonce, created_at=now)],
        update_conflicts=True,
        unique_fields=["email"],
        update_fields=["password", "nonce", "created_at"],
    )
    token = signing.TimestampSigner(salt=SIGNUP_LINK_SALT).sign_object(
        {"email": email, "nonce": nonce}
    )
    _mail(
        email=email,
        template="signup_confirm",
        context={
            "link": settings.GATEWAY_BASE_URL + reverse("dashboard:signup-confirm", args=[token]),
            "days": SIGNUP_LINK_MAX_AGE.days,
        },
    )


def _mail(*, email: str, template: str, context: dict) -> None:
    """One of the sign-up mails; every link in it leads to GATEWAY_BASE_URL, never to the Host
    the request named."""
    context = {
        **context,
        "email": email,
        "login_link": settings.GATEWAY_BASE_URL + reverse("dashboard:login"),
        "reset_link": settings.GATEWAY_BASE_URL + reverse("dashboard:password-reset"),
    }
    subject = render_to_string(f"registration/{template}_subject.txt", context)
    body = render_to_string(f"registration/{template}_email.txt", context)
    send_mail(" ".join(subject.split()), body, None, [email])


def sign_up_confirm(*, token: str) -> User:
    """The account of a followed confirmation link, created with the password chosen at sign-up.
    The link works once: the pending sign-up it names is deleted with the account's creation."""
    signer = signing.TimestampSigner(salt=SIGNUP_LINK_SALT)
    try:
        named = signer.unsign_object(token, max_age=SIGNUP_LINK_MAX_AGE)
    except signing.SignatureExpired:
        raise SignUpLinkRefused(
            f"This confirmation link has expired (links work for {SIGNUP_LINK_MAX_AGE.days} "
            "days): sign up again for a new one."
        ) from None
    except signing.BadSignature:
        raise SignUpLinkRefused(
            "This confirmation link is not valid: copy the whole link from the email, or sign "
            "up again for a new one."
        ) from None
    already_confirmed = SignUpAlreadyConfirmed("This address is confirmed already: sign in.")
    with transaction.atomic():
        pending = PendingSignUp.objects.select_for_update().filter(email=named["email"]).first()
        if pending is None or not constant_time_compare(pending.nonce, named["nonce"]):
            if User.objects.filter(email__iexact=named["email"]).exists():
                raise already_confirmed
            raise SignUpLinkRefused(
                "This confirmation link was replaced by a newer one: follow the link in the "
                "latest email, or sign up again."
            )
        pending.delete()
        user = None
        # The address may have got an account another way since it signed up (an operator's
        # command, the admin), a moment ago included.
        if not User.objects.filter(email__iexact=pending.email).exists():
            try:
                with transaction.atomic():
                    user = user_sign_up(email=pending.email, password_hash=pending.password)
            except IntegrityError:
                pass
    if user is None:
        raise already_confirmed
    return user


def user_sign_up(*, email: str, password_hash: str) -> User:
    """A person whose address is confirmed, with the trial credits of SIGNUP_CREDITS_USD (none by
    default).

    One transaction, so an account never exists without the credits it was promised; the grant's
    idempotency reference books it once per person whatever retries the page sees."""
    with transaction.atomic():
        user = User.objects.create(email=email, password=password_hash)
        if settings.SIGNUP_CREDITS_MICROS:
            credits_grant(
                account=account_for_user(user=user),
                amount_micros=settings.SIGNUP_CREDITS_MICROS,
                reason="Sign-up credits",
                idempotency_ref=f"signup-{user.pk}",
            )
    return user
