from django.conf import settings
from django.utils import timezone

from dashboard.views import user_memberships


def navigation(request):
    """What the base template's navigation needs on every page."""
    context = {
        "gateway_base_url": settings.GATEWAY_BASE_URL,
        "time_zone": timezone.get_current_timezone_name(),
    }
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        # A callable, so templates that do not show the navigation cost no query.
        context["nav_memberships"] = lambda: user_memberships(request)
    return context
