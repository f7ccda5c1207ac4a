"""Guarding sign-in against password guessing (django-axes counts the failures; see settings).

A locked-out email address and client address pair sees a page that says for how long, and a
password reset by email lifts the lock at once: whoever reads the mailbox is the owner.
"""

from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.forms import normalized_email


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
