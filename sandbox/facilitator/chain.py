"""An in-memory double of the EVM state that EIP-3009 payments touch.

Per chain it holds the USDC contract of the SDK's default-asset table: balances (every address
starts with a generous balance until it is set), the EIP-3009 authorization states, and the
receipts of the transactions it executed. `transferWithAuthorization` behaves like Circle's
FiatToken: it checks the validity window, the unused nonce, the EIP-712 signature (recovered
offline with the SDK's own hashing) and the balance, in that order, and reverts with the
contract's own messages, which the SDK's facilitator maps to its reason strings.

The np rail's batched payments are signed for the `GatewayWalletBatched` domain (version "1",
verifying contract = the token). Their nonces live in a namespace of their own, as they would in
a separate wallet contract; they move the same USDC balances.

One lock guards all state, so concurrent settlements of one authorization cannot both pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from eth_utils import keccak
from x402.mechanisms.evm.default_assets import DEFAULT_ASSETS
from x402.mechanisms.evm.eip712 import hash_typed_data
from x402.mechanisms.evm.exact.eip3009_utils import ParsedEIP3009Authorization
from x402.mechanisms.evm.types import AUTHORIZATION_TYPES, TypedDataDomain
from x402.mechanisms.evm.utils import get_evm_chain_id, normalize_address
from x402.mechanisms.evm.v1.constants import V1_NETWORK_CHAIN_IDS
from x402.mechanisms.evm.verify import verify_eoa_signature

DEFAULT_NETWORKS = ("eip155:8453", "eip155:84532")
DEFAULT_INITIAL_BALANCE = 1_000 * 10**6  # 1,000 USDC in base units
MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11"

BATCHED_DOMAIN_NAME = "GatewayWalletBatched"
BATCHED_DOMAIN_VERSION = "1"

REVERT_NOT_YET_VALID = "FiatTokenV2: authorization is not yet valid"
REVERT_EXPIRED = "FiatTokenV2: authorization is expired"
REVERT_USED = "FiatTokenV2: authorization is used or canceled"
REVERT_INVALID_SIGNATURE = "FiatTokenV2: invalid signature"
REVERT_BALANCE = "ERC20: transfer amount exceeds balance"

# Any non-empty bytecode: the SDK only asks whether an address holds code.
_CONTRACT_CODE = bytes.fromhex("6080604052")


class ContractRevert(RuntimeError):
    """A call the contract reverts, worded as an RPC node reports it."""

    def __init__(self, reason: str):
        super().__init__(f"execution reverted: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Token:
    network: str
    chain_id: int
    address: str
    name: str
    version: str
    decimals: int
    symbol: str


@dataclass(frozen=True)
class Transfer:
    sender: str
    recipient: str
    value: int


@dataclass(frozen=True)
class Receipt:
    tx_hash: str
    block_number: int
    token: str
    transfers: tuple[Transfer, ...]


@dataclass(frozen=True)
class SignedAuthorization:
    authorization: ParsedEIP3009Authorization
    signature: bytes


@dataclass(frozen=True)
class BatchExecution:
    """The outcome of one batch transaction: its hash ("" when nothing was transferred) and,
    per item in order, None for a transfer made or the revert that refused it."""

    tx_hash: str
    failures: tuple[ContractRevert | None, ...]


def chain_id_of(network: str) -> int:
    """The chain id of a CAIP-2 network (`eip155:8453`) or an x402 v1 name (`base`)."""
    if network in V1_NETWORK_CHAIN_IDS:
        return V1_NETWORK_CHAIN_IDS[network]
    return get_evm_chain_id(network)


def nonce_bytes(nonce: bytes | str) -> bytes:
    return nonce if isinstance(nonce, bytes) else bytes.fromhex(nonce.removeprefix("0x"))


def authorization_digest(
    authorization: ParsedEIP3009Authorization, domain: TypedDataDomain
) -> bytes:
    message = {
        "from": authorization.from_address,
        "to": authorization.to,
        "value": authorization.value,
        "validAfter": authorization.valid_after,
        "validBefore": authorization.valid_before,
        "nonce": authorization.nonce,
    }
    return hash_typed_data(domain, AUTHORIZATION_TYPES, "TransferWithAuthorization", message)


def signature_matches(
    authorization: ParsedEIP3009Authorization, signature: bytes, domain: TypedDataDomain
) -> bool:
    try:
        return verify_eoa_signature(
            authorization_digest(authorization, domain), signature, authorization.from_address
        )
    except ValueError:
        return False


class OfflineChain:
    def __init__(
        self,
        *,
        networks: Iterable[str] = DEFAULT_NETWORKS,
        initial_balance: int = DEFAULT_INITIAL_BALANCE,
        clock: Callable[[], float] = time.time,
    ):
        self.initial_balance = initial_balance
        self.clock = clock
        self._lock = threading.Lock()
        self._tokens: dict[int, Token] = {}
        self._token_by_address: dict[str, Token] = {}
        for network in networks:
            token = _default_token(network)
            if token.address.lower() in self._token_by_address:
                # The signer routes contract calls by address alone.
                raise ValueError(f"{token.address} is already the token of another chain")
            self._tokens[token.chain_id] = token
            self._token_by_address[token.address.lower()] = token
        self._balances: dict[tuple[int, str], int] = {}
        self._used_nonces: set[tuple[int, str, str, bytes]] = set()
        self._receipts: dict[str, Receipt] = {}
        self._block_number = 1

    @property
    def networks(self) -> tuple[str, ...]:
        return tuple(token.network for token in self._tokens.values())

    def runs(self, network: str) -> bool:
        try:
            return chain_id_of(network) in self._tokens
        except ValueError:
            return False

    def token(self, network: str) -> Token:
        try:
            return self._tokens[chain_id_of(network)]
        except (KeyError, ValueError):
            raise KeyError(f"the offline chain does not run {network}") from None

    def token_at(self, address: str) -> Token | None:
        return self._token_by_address.get(address.lower())

    def code_at(self, address: str) -> bytes:
        known = address.lower() in self._token_by_address
        return _CONTRACT_CODE if known or address.lower() == MULTICALL3_ADDRESS.lower() else b""

    def batched_domain(self, network: str) -> TypedDataDomain:
        token = self.token(network)
        return TypedDataDomain(
            name=BATCHED_DOMAIN_NAME,
            version=BATCHED_DOMAIN_VERSION,
            chain_id=token.chain_id,
            verifying_contract=token.address,
        )

    # -- reads ---------------------------------------------------------------------------

    def balance_of(self, network: str, holder: str) -> int:
        chain_id = self.token(network).chain_id
        with self._lock:
            return self._balance(chain_id, holder)

    def set_balance(self, network: str, holder: str, amount: int) -> None:
        chain_id = self.token(network).chain_id
        with self._lock:
            self._balances[(chain_id, holder.lower())] = amount

    def authorization_state(
        self, network: str, authorizer: str, nonce: bytes | str, *, batched: bool = False
    ) -> bool:
        """EIP-3009 `authorizationState`: whether the nonce is used (in the batched namespace
        when `batched`)."""
        token = self.token(network)
        domain_name = BATCHED_DOMAIN_NAME if batched else token.name
        key = (token.chain_id, domain_name, authorizer.lower(), nonce_bytes(nonce))
        with self._lock:
            return key in self._used_nonces

    def receipt(self, tx_hash: str) -> Receipt | None:
        with self._lock:
            return self._receipts.get(tx_hash.lower())

    # -- transactions --------------------------------------------------------------------

    def transfer_with_authorization(
        self,
        token_address: str,
        authorization: ParsedEIP3009Authorization,
        signature: bytes,
        *,
        execute: bool = True,
    ) -> str:
        """Run the token's `transferWithAuthorization`; with `execute=False` only as an
        `eth_call` (nothing changes). Returns the transaction hash; raises ContractRevert."""
        token = self.token_at(token_address)
        if token is None:
            raise ContractRevert("no contract at this address")
        domain = TypedDataDomain(
            name=token.name,
            version=token.version,
            chain_id=token.chain_id,
            verifying_contract=token.address,
        )
        with self._lock:
            self._check_authorization(token, domain, authorization, signature)
            tx_hash = _hash_hex(
                b"transfer",
                token.chain_id.to_bytes(32, "big"),
                bytes.fromhex(token.address[2:]),
                bytes.fromhex(normalize_address(authorization.from_address)[2:]),
                authorization.nonce,
            )
            if execute:
                self._apply(token, domain, authorization)
                self._record(tx_hash, token, [authorization])
            return tx_hash

    def batch_transfer_with_authorization(
        self, network: str, batch_id: str, items: Sequence[SignedAuthorization]
    ) -> BatchExecution:
        """Settle batched authorizations in one transaction: each is checked like
        `transferWithAuthorization` against the batched domain; the valid ones move."""
        token = self.token(network)
        domain = self.batched_domain(network)
        with self._lock:
            failures: list[ContractRevert | None] = []
            applied: list[ParsedEIP3009Authorization] = []
            for item in items:
                try:
                    self._check_authorization(token, domain, item.authorization, item.signature)
                except ContractRevert as revert:
                    failures.append(revert)
                    continue
                self._apply(token, domain, item.authorization)
                applied.append(item.authorization)
                failures.append(None)
            if not applied:
                return BatchExecution(tx_hash="", failures=tuple(failures))
            tx_hash = _hash_hex(
                b"batch",
                token.chain_id.to_bytes(32, "big"),
                batch_id.encode(),
                *(bytes.fromhex(a.from_address.lower()[2:]) + a.nonce for a in applied),
            )
            self._record(tx_hash, token, applied)
            return BatchExecution(tx_hash=tx_hash, failures=tuple(failures))

    # -- inside the lock -----------------------------------------------------------------

    def _balance(self, chain_id: int, holder: str) -> int:
        return self._balances.get((chain_id, holder.lower()), self.initial_balance)

    def _check_authorization(
        self,
        token: Token,
        domain: TypedDataDomain,
        authorization: ParsedEIP3009Authorization,
        signature: bytes,
    ) -> None:
        now = self.clock()
        if not now > authorization.valid_after:
            raise ContractRevert(REVERT_NOT_YET_VALID)
        if not now < authorization.valid_before:
            raise ContractRevert(REVERT_EXPIRED)
        if self._nonce_key(token, domain, authorization) in self._used_nonces:
            raise ContractRevert(REVERT_USED)
        if not signature_matches(authorization, signature, domain):
            raise ContractRevert(REVERT_INVALID_SIGNATURE)
        if self._balance(token.chain_id, authorization.from_address) < authorization.value:
            raise ContractRevert(REVERT_BALANCE)

    def _nonce_key(
        self, token: Token, domain: TypedDataDomain, authorization: ParsedEIP3009Authorization
    ) -> tuple[int, str, str, bytes]:
        return (
            token.chain_id,
            domain.name,
            authorization.from_address.lower(),
            authorization.nonce,
        )

    def _apply(
        self, token: Token, domain: TypedDataDomain, authorization: ParsedEIP3009Authorization
    ) -> None:
        sender = authorization.from_address.lower()
        recipient = authorization.to.lower()
        self._used_nonces.add(self._nonce_key(token, domain, authorization))
        self._balances[(token.chain_id, sender)] = (
            self._balance(token.chain_id, sender) - authorization.value
        )
        self._balances[(token.chain_id, recipient)] = (
            self._balance(token.chain_id, recipient) + authorization.value
        )

    def _record(
        self, tx_hash: str, token: Token, authorizations: list[ParsedEIP3009Authorization]
    ) -> None:
        self._block_number += 1
        self._receipts[tx_hash] = Receipt(
            tx_hash=tx_hash,
            block_number=self._block_number,
            token=token.address,
            transfers=tuple(
                Transfer(
                    sender=normalize_address(a.from_address),
                    recipient=normalize_address(a.to),
                    value=a.value,
                )
                for a in authorizations
            ),
        )


def _default_token(network: str) -> Token:
    chain_id = chain_id_of(network)
    caip2 = f"eip155:{chain_id}"
    assets = DEFAULT_ASSETS.get(caip2)
    if not assets or assets[0].get("asset_transfer_method") == "permit2":
        raise ValueError(f"the SDK has no EIP-3009 default asset for {network}")
    asset = assets[0]
    return Token(
        network=caip2,
        chain_id=chain_id,
        address=normalize_address(asset["asset"]),
        name=asset["name"],
        version=asset["version"],
        decimals=asset["decimals"],
        symbol=asset["symbol"],
    )


def _hash_hex(*parts: bytes) -> str:
    return "0x" + keccak(b"".join(parts)).hex()
