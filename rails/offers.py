"""What an unpaid request to a priced rail endpoint is told: the contract's payment offers, one
per protocol and network, and the protocols' own challenges built from the same figures.

Everything here comes from settings and the catalog alone: a 402 never waits on a facilitator or
a chain. Amounts are integer micro-dollars, which are USDC's (and USDC.e's) base units.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from x402.mechanisms.evm.default_assets import get_default_asset
from x402.mechanisms.evm.v1.constants import V1_NETWORK_CHAIN_IDS
from x402.schemas import PaymentRequired, PaymentRequirements, ResourceInfo
from x402.schemas.v1 import PaymentRequirementsV1

X402, NP, MPP = "x402", "np", "mpp"
PROTOCOLS = (MPP, X402, NP)

# Circle Gateway's marker for batched EIP-3009 authorizations: the buyer signs against this
# EIP-712 domain, and the facilitator settles many authorizations in one transaction later.
NP_EXTRA = {"name": "GatewayWalletBatched", "version": "1"}
NP_SETTLEMENT = "batched-eip3009"
NP_VERSION = "x402-v2"

USDC_DECIMALS = 6  # a micro-dollar is one base unit of USDC and of USDC.e


@dataclass(frozen=True)
class Rail:
    protocol: str
    base_url: str


def rail_for(protocol: str) -> Rail:
    return Rail(
        protocol=protocol,
        base_url={X402: settings.X402_URL, NP: settings.NP_URL, MPP: settings.MPP_URL}[protocol],
    )


def rail_url(*, protocol: str, slug: str, path: str) -> str:
    """The address of a provider path on a rail: ``<rail url>/<slug><provider path>``."""
    return f"{rail_for(protocol).base_url}/{slug}{path}"


def usdc_amount(amount_micros: int) -> str:
    """Micro-dollars as a decimal amount of the stablecoin: 10000 -> "0.01"."""
    text = f"{Decimal(amount_micros).scaleb(-USDC_DECIMALS):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def payment_offers(*, slug: str, path: str, amount_micros: int) -> list[dict]:
    """The contract's Payment offer records: one for mpp, one per x402 network, one for np."""
    amount = usdc_amount(amount_micros)
    offers = [
        {
            "method": MPP,
            "intent": "charge",
            "rail": f"eip155:{settings.MPP_CHAIN_ID}",
            "currency": "USDC.e",
            "amount": amount,
            "url": rail_url(protocol=MPP, slug=slug, path=path),
        }
    ]
    offers += [
        {
            "method": X402,
            "intent": "charge",
            "rail": network,
            "currency": "USDC",
            "amount": amount,
            "url": rail_url(protocol=X402, slug=slug, path=path),
        }
        for network in settings.X402_NETWORKS
    ]
    offers.append(
        {
            "method": NP,
            "intent": "charge",
            "rail": settings.NP_NETWORK,
            "currency": "USDC",
            "amount": amount,
            "url": rail_url(protocol=NP, slug=slug, path=path),
            "settlement": NP_SETTLEMENT,
            "version": NP_VERSION,
        }
    )
    return offers


def _usdc(network: str) -> dict:
    asset = get_default_asset(network)
    if asset["decimals"] != USDC_DECIMALS:
        raise ValueError(f"the default asset of {network} does not have {USDC_DECIMALS} decimals")
    return asset


def payment_requirements(*, protocol: str, amount_micros: int) -> list[PaymentRequirements]:
    """The x402 v2 requirements a payment on ``protocol`` (x402 or np) must meet."""
    networks = [settings.NP_NETWORK] if protocol == NP else settings.X402_NETWORKS
    requirements = []
    for network in networks:
        asset = _usdc(network)
        requirements.append(
            PaymentRequirements(
                scheme="exact",
                network=network,
                asset=asset["asset"],
                amount=str(amount_micros),
                pay_to=settings.RAIL_PAY_TO,
                max_timeout_seconds=settings.RAIL_PAYMENT_MAX_TIMEOUT_SECONDS,
                extra=dict(NP_EXTRA) if protocol == NP else _domain(asset),
            )
        )
    return requirements


def _domain(asset: dict) -> dict:
    return {"name": asset["name"], "version": asset["version"]}


def v1_network(network: str) -> str | None:
    """The x402 v1 name of a CAIP-2 network ("eip155:8453" -> "base"), if it has one."""
    chain_id = int(network.split(":", 1)[1]) if network.startswith("eip155:") else None
    names = [name for name, known in V1_NETWORK_CHAIN_IDS.items() if known == chain_id]
    return names[0] if names else None


def payment_requirements_v1(
    *, amount_micros: int, resource_url: str, description: str, mime_type: str
) -> list[PaymentRequirementsV1]:
    """The x402 v1 requirements of the x402 rail, for clients of the first protocol version."""
    requirements = []
    for v2 in payment_requirements(protocol=X402, amount_micros=amount_micros):
        name = v1_network(v2.network)
        if name is None:
            continue
        requirements.append(
            PaymentRequirementsV1(
                scheme=v2.scheme,
                network=name,
                max_amount_required=v2.amount,
                resource=resource_url,
                description=description,
                mime_type=mime_type,
                pay_to=v2.pay_to,
                max_timeout_seconds=v2.max_timeout_seconds,
                asset=v2.asset,
                extra=v2.extra,
            )
        )
    return requirements


def payment_required(
    *,
    protocol: str,
    amount_micros: int,
    resource_url: str,
    description: str,
    mime_type: str,
    error: str,
) -> PaymentRequired:
    """x402 v2's PaymentRequired, sent base64-encoded in the PAYMENT-REQUIRED header."""
    return PaymentRequired(
        error=error,
        resource=ResourceInfo(url=resource_url, description=description, mime_type=mime_type),
        accepts=payment_requirements(protocol=protocol, amount_micros=amount_micros),
    )
