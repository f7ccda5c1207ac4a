"""The pympp server of this process: the tempo charge method configured from settings, and the
three things the rail asks of it (a challenge, a non-mutating validation, the settlement).

Challenges are HMAC-bound to their contents (realm, method, intent, the request with its amount,
currency, recipient, chain and the route's method, path and query, and the expiry), so issuing one
needs neither the chain nor a database; verifying one needs the chain's RPC.
"""

import base64
import hashlib
import hmac
import json
import os
import threading
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from mpp import Credential, Receipt
from mpp.methods.tempo import server as tempo
from mpp.server import Mpp, Request, Validation

from rails.mpp.loop import loop_run
from rails.mpp.store import DatabaseStore
from rails.offers import MPP, rail_for, usdc_amount


@dataclass(frozen=True)
class MppConfig:
    rpc_url: str
    chain_id: int
    currency: str
    recipient: str
    realm: str
    secret_key: str
    challenge_seconds: int
    rpc_timeout: float


def mpp_config() -> MppConfig:
    return MppConfig(
        rpc_url=settings.MPP_RPC_URL,
        chain_id=settings.MPP_CHAIN_ID,
        currency=settings.MPP_CURRENCY,
        recipient=settings.MPP_PAY_TO or settings.RAIL_PAY_TO,
        realm=settings.MPP_REALM or urlsplit(rail_for(MPP).base_url).netloc,
        # Derived, not the SECRET_KEY itself: the challenge HMAC never sees the project's key.
        secret_key=settings.MPP_SECRET_KEY
        or hmac.new(settings.SECRET_KEY.encode(), b"mpp-challenge", hashlib.sha256).hexdigest(),
        challenge_seconds=settings.MPP_CHALLENGE_SECONDS,
        rpc_timeout=settings.MPP_RPC_TIMEOUT_SECONDS,
    )


_servers: dict[tuple[int, MppConfig], Mpp] = {}
_lock = threading.Lock()


def mpp_server(config: MppConfig) -> Mpp:
    """One SDK server per process and configuration: its tempo intent keeps an HTTP client
    bound to the process's event loop."""
    key = (os.getpid(), config)
    server = _servers.get(key)
    if server is None:
        with _lock:
            server = _servers.get(key)
            if server is None:
                server = Mpp(
                    tempo.charge(
                        recipient=config.recipient,
                        chain_id=config.chain_id,
                        rpc_url=config.rpc_url,
                        currencies=[config.currency],
                        timeout=config.rpc_timeout,
                        confirmation_timeout=config.rpc_timeout * 2,
                    ),
                    realm=config.realm,
                    secret_key=config.secret_key,
                    store=DatabaseStore(),
                )
                _servers[key] = server
    return server


def _loop_timeout(config: MppConfig) -> float:
    # Above the SDK's own deadlines (an RPC call, then the send and receipt recovery).
    return config.rpc_timeout * 3 + 5


def route_input(amount_micros: int) -> dict:
    """What a route charges, as the SDK's tempo method takes it (a decimal amount)."""
    return {"amount": usdc_amount(amount_micros)}


def challenge_issue(*, config: MppConfig, request: Request, amount_micros: int) -> list[str]:
    """The ``WWW-Authenticate: Payment ...`` values of a fresh challenge for ``request``."""
    handler = mpp_server(config).charge(
        **route_input(amount_micros), expires_in=timedelta(seconds=config.challenge_seconds)
    )
    unpaid = Request(request.method, request.url)
    result = loop_run(handler(unpaid), timeout=_loop_timeout(config))
    return result.challenge.headers.get_list("www-authenticate")


def echoed_request(credential: Credential) -> dict:
    """The challenge request a credential echoes (authenticated by ``credential_validate``)."""
    encoded = credential.challenge.request or ""
    try:
        decoded = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except ValueError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


def credential_validate(
    *, config: MppConfig, credential: Credential, amount_micros: int
) -> Validation:
    """Authenticate the echoed challenge (HMAC, realm, expiry, this route's price, currency,
    recipient and chain) and check the payment without consuming or broadcasting it."""
    return loop_run(
        mpp_server(config).validate_credential(
            credential, intent="charge", request=route_input(amount_micros)
        ),
        timeout=_loop_timeout(config),
    )


def credential_broadcast(
    *, config: MppConfig, credential: Credential, amount_micros: int
) -> Receipt:
    """Settle: the SDK reserves the transaction in the replay store, then broadcasts it (pull)
    or re-verifies its receipt (push)."""
    return loop_run(
        mpp_server(config).broadcast_credential(
            credential, intent="charge", request=route_input(amount_micros)
        ),
        timeout=_loop_timeout(config),
    )


_rpc_clients: dict[int, httpx.Client] = {}


def _rpc_client() -> httpx.Client:
    """One pooled client per process: building one loads the CA bundle, which costs more than
    the call itself."""
    pid = os.getpid()
    client = _rpc_clients.get(pid)
    if client is None:
        with _lock:
            client = _rpc_clients.setdefault(pid, httpx.Client())
    return client


def rpc_chain_id(config: MppConfig) -> int:
    """The chain id the RPC reports. A pull payment is only broadcast after the provider has
    answered, so the RPC is asked before the provider is called: an outage costs the caller a
    503, not a served answer that cannot be paid for."""
    reply = _rpc_client().post(
        config.rpc_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []},
        timeout=config.rpc_timeout,
    )
    reply.raise_for_status()
    return int(reply.json()["result"], 16)


# keccak256("Transfer(address,address,uint256)"), the event a TIP-20 transfer emits.
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def transfer_landed(*, config: MppConfig, tx_hash: str, amount_micros: int) -> bool | None:
    """Whether transaction ``tx_hash`` paid at least ``amount_micros`` of the currency to the
    recipient: True, False (it reverted, or paid something else), or None (not mined yet)."""
    reply = _rpc_client().post(
        config.rpc_url,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "eth_getTransactionReceipt",
            "params": [tx_hash],
        },
        timeout=config.rpc_timeout,
    )
    reply.raise_for_status()
    receipt = reply.json().get("result")
    if not receipt:
        return None
    if int(receipt.get("status") or "0x0", 16) != 1:
        return False
    recipient = config.recipient.lower()[-40:]
    return any(
        str(log.get("address", "")).lower() == config.currency.lower()
        and len(log.get("topics") or []) >= 3
        and log["topics"][0].lower() == TRANSFER_TOPIC
        and log["topics"][2].lower()[-40:] == recipient
        and int(log.get("data") or "0x0", 16) >= amount_micros
        for log in receipt.get("logs") or []
    )
