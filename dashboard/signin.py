"""Guarding sign-in against password guessing (django-axes counts the failures; see settings).

A locked-out email address and client address pair sees a page that says for how long, and a
password reset by email lifts the lock at once: whoever reads the mailbox is the owner. Reset
emails, like sign-up emails, have their own ceiling, per address and per client address, so the
forms cannot be used to flood a mailbox or to send mail in bulk.
"""

import hashlib
import math

from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.forms import normalized_email
from gateway.ratelimit import window_count

EMAIL_WINDOW_SECONDS = 3600


def locked_out(request: HttpRequest, response, credentials: dict | None) -> HttpResponse:
    """django-axes' AXES_LOCKOUT_CALLABLE: the page a locked-out sign-in gets, status 429."""
    return render(
        request,
        "registration/locked_out.html",
        {
            "failure_limit": settings.AXES_FAILURE_LIMIT,
            "minutes": int(settings.AXES_COOLOFF_TIME.total_seconds() // 60),
            # As the sign-in form reads it (axes may hand over credentials with the address masked).
            "username": normalized_email(request.POST.get("username", "")),
        },
        status=429,
    )


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """Django's reset confirmation, which also clears the address's failed sign-ins."""

    def form_valid(self, form):
        response = super().form_valid(form)
        axes_reset(username=form.user.get_username())
        return response


def mailed_link_context() -> dict:
    """``protocol`` and ``domain`` for a mail's links, from GATEWAY_BASE_URL. Django would take
    them from the request's Host header, which the sender of the request chooses: a reset asked
    for with ``Host: evil.example`` would mail its owner a link that hands the token to that
    host."""
    protocol, _, domain = settings.GATEWAY_BASE_URL.partition("://")
    return {"protocol": protocol, "domain": domain}


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset request, refused with 429 once an address or a client address has asked
    for more emails this hour than the settings allow (whether or not the address has an
    account, so the refusal reveals nothing). Its link leads to GATEWAY_BASE_URL."""

    @property
    def extra_email_context(self) -> dict:
        return mailed_link_context()

    def form_valid(self, form):
        wait = reset_email_wait_seconds(
            email=normalized_email(form.cleaned_data["email"]),
            client_address=self.request.META.get("REMOTE_ADDR", ""),
        )
        if wait:
            form.add_error(None, too_many_emails_message(what="reset", wait_seconds=wait))
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().form_valid(form)


def too_many_emails_message(*, what: str, wait_seconds: int) -> str:
    minutes = math.ceil(wait_seconds / 60)
    return (
        f"Too many {what} emails were asked for. Check your inbox (and spam folder) for the "
        f"last one, or try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


def reset_email_wait_seconds(*, email: str, client_address: str) -> int:
    """Count a reset email asked for; 0 when it may be sent, otherwise the seconds until the
    address or the client address may ask again."""
    return email_wait_seconds(
        purpose="password-reset",
        email=email,
        client_address=client_address,
        per_address=settings.PASSWORD_RESET_EMAILS_PER_ADDRESS_PER_HOUR,
        per_client=settings.PASSWORD_RESET_EMAILS_PER_CLIENT_PER_HOUR,
    )


def email_wait_seconds(
    *, purpose: str, email: str, client_address: str, per_address: int, per_client: int
) -> int:
    """Count an email of ``purpose`` asked for, against its hourly ceilings per address and per
    client address; 0 when it may be sent, otherwise the seconds until both may ask again."""
    limits = {
        f"{purpose}:" + hashlib.sha256(email.encode()).hexdigest(): per_address,
        f"{purpose}-client:{client_address}": per_client,
    }
    waits = []
    for subject, limit in limits.items():
        count, seconds_left = window_count(subject=subject, window_seconds=EMAIL_WINDOW_SECONDS)
        if count > limit:
            waits.append(seconds_left)
    return max(waits, default=0)
