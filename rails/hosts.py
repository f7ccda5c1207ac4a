"""Serving a rail on a host of its own: a rail address without a path (``X402_URL=
https://x402.example.com``) takes every path of its host."""

from urllib.parse import urlsplit

from django.conf import settings

from rails.offers import PROTOCOLS, rail_for


class RailUrlconf:
    """A URLconf holding one rail's routes at the root of its host."""

    def __init__(self, protocol: str):
        from rails.urls import rail_patterns

        self.protocol = protocol
        self.urlpatterns = rail_patterns(protocol, "")


def _rail_hosts() -> dict[str, RailUrlconf]:
    hosts = {}
    for protocol in PROTOCOLS:
        address = urlsplit(rail_for(protocol).base_url)
        if address.netloc and not address.path.strip("/"):
            hosts[address.netloc.lower()] = RailUrlconf(protocol)
    return hosts


class RailHostMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.hosts = _rail_hosts() if settings.RAILS_ENABLED else {}

    def __call__(self, request):
        if self.hosts:
            urlconf = self.hosts.get(request.get_host().lower())
            if urlconf is not None:
                request.urlconf = urlconf
        return self.get_response(request)
