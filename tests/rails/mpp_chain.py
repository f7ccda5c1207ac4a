"""The mpp rail over a local Tempo chain (sandbox.tempo): its JSON-RPC on a local port, and the
live test server's rail paying into it."""

from dataclasses import dataclass

import pytest
from django.conf import settings

from sandbox.tempo import TempoChain, TempoRpcServer, serve_in_thread


@pytest.fixture
def tempo_rpc(settings) -> TempoRpcServer:
    """A local Tempo chain the gateway settles on (MPP_RPC_URL)."""
    with serve_in_thread(chain=TempoChain(chain_id=settings.MPP_CHAIN_ID)) as rpc:
        settings.MPP_RPC_URL = rpc.url
        yield rpc


@dataclass
class MppRail:
    url: str  # MPP_URL
    rpc_url: str
    chain: TempoChain


@pytest.fixture
def mpp_rail(gateway, tempo_rpc, settings) -> MppRail:
    """The live gateway's mpp rail, served from the sandbox as `make run` serves it."""
    settings.LIVE_CALLS_USE_SANDBOX = True
    settings.MPP_URL = f"{gateway}/rails/mpp"
    return MppRail(url=settings.MPP_URL, rpc_url=tempo_rpc.url, chain=tempo_rpc.chain)


def mpp_path(slug: str, path: str) -> str:
    """The path part of ``{MPP_URL}/<slug><path>`` on the test server."""
    return f"{settings.MPP_URL.removeprefix(settings.GATEWAY_BASE_URL)}/{slug}{path}"


def recipient_balance(chain: TempoChain) -> int:
    """What the rail's recipient has received on the chain."""
    return chain.balance(settings.MPP_CURRENCY, settings.RAIL_PAY_TO) - chain.initial_balance
