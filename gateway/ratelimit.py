from django.conf import settings
from django_ratelimit.core import get_usage
from rest_framework.throttling import BaseThrottle

from gateway.selectors import KeyPrincipal


def _key_of(group, request) -> str:
    return str(request.auth.key_id)


def _rate_of(group, request) -> str:
    limit = request.auth.rate_limit_per_minute or settings.RATE_LIMIT_PER_MINUTE
    return f"{limit}/m"


class ApiKeyRateThrottle(BaseThrottle):
    """Requests per minute per API key.

    django-ratelimit counts with the cache's atomic add/incr, so with Redis the count is exact
    across threads and workers; with the in-process cache it is exact within one worker.
    """

    retry_after = 1

    def allow_request(self, request, view):
        if not isinstance(request.auth, KeyPrincipal):
            return True
        usage = get_usage(request, group="api-key", key=_key_of, rate=_rate_of, increment=True)
        if usage is None:  # rate limiting disabled in settings
            return True
        self.retry_after = max(1, usage["time_left"])
        return not usage["should_limit"]

    def wait(self):
        return self.retry_after
