import pytest
from django.conf import settings

from tests.calls.conftest import LeadsCatalog, leads

__all__ = ["LeadsCatalog", "leads"]


@pytest.fixture
def rail_client():
    """A client without a gateway key, as a rail's payer is."""
    from rest_framework.test import APIClient

    return APIClient()


def x402_path(slug: str, path: str) -> str:
    """The path part of ``{X402_URL}/<slug><path>`` on the test server."""
    return f"{settings.X402_URL.removeprefix(settings.GATEWAY_BASE_URL)}/{slug}{path}"


@pytest.fixture
def facilitator(settings):
    """One local facilitator double (x402 and np) over an offline chain holding every network
    the rails offer."""
    from sandbox.facilitator.chain import OfflineChain
    from sandbox.facilitator.server import serve_in_thread

    networks = list(dict.fromkeys([*settings.X402_NETWORKS, settings.NP_NETWORK]))
    with serve_in_thread(chain=OfflineChain(networks=networks)) as server:
        settings.X402_FACILITATOR_URL = server.url
        settings.NP_FACILITATOR_URL = server.url
        yield server


@pytest.fixture
def provider(leads, settings):
    """The leads API served by a real local HTTP server."""
    from tests.http_double import HttpDouble, Reply

    settings.UPSTREAM_ALLOW_PRIVATE_NETWORKS = True
    with HttpDouble() as double:
        leads.api.base_url = double.url
        leads.api.save(update_fields=["base_url"])
        double.routes["/v1/items"] = Reply(200, {"items": [1, 2, 3]})
        double.routes["/v1/people/enrich"] = Reply(200, {"person": {"name": "Ada"}})
        yield double
