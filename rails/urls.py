"""The rails' routes, under each rail's address (MPP_URL, X402_URL, NP_URL). A rail whose
address has a path of its own (the default, ``<gateway>/rails/x402``) is routed here by that
path; a rail on a host of its own is routed by rails.hosts."""

from urllib.parse import urlsplit

from django.urls import re_path

from rails.apis import CreditsPurchaseApi, RailCallApi, RailOpenApiDocumentApi
from rails.offers import PROTOCOLS, X402, rail_for


def rail_patterns(protocol: str, prefix: str) -> list:
    """``<prefix>/openapi.json`` and ``<prefix>/<slug><provider path>`` of one rail, and on the
    x402 rail ``<prefix>/credits/purchase`` (before the provider paths, which it shadows)."""
    start = f"^{prefix.strip('/')}/" if prefix.strip("/") else "^"
    purchase = [
        re_path(
            rf"{start}credits/purchase$",
            CreditsPurchaseApi.as_view(),
            name="rail-x402-credits-purchase",
        )
    ]
    return [
        re_path(
            rf"{start}openapi\.json$",
            RailOpenApiDocumentApi.as_view(protocol=protocol),
            name=f"rail-{protocol}-openapi",
        ),
        *(purchase if protocol == X402 else []),
        re_path(
            rf"{start}(?P<slug>[^/]+)(?P<path>/.*)?$",
            RailCallApi.as_view(protocol=protocol),
            name=f"rail-{protocol}",
        ),
    ]


def rail_path_prefix(protocol: str) -> str:
    return urlsplit(rail_for(protocol).base_url).path.rstrip("/")


urlpatterns = [
    pattern
    for protocol in PROTOCOLS
    if rail_path_prefix(protocol)
    for pattern in rail_patterns(protocol, rail_path_prefix(protocol))
]
