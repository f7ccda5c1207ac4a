"""The SDK's facilitator signer protocol (`FacilitatorEvmSigner`) over an OfflineChain.

The SDK's exact-EVM facilitator reads and writes the chain only through this protocol: code
lookups, contract reads (`balanceOf`, `name`, `version`, `authorizationState`, an `eth_call` of
`transferWithAuthorization`, and Multicall3's `tryAggregate` of those), the real
`transferWithAuthorization` and its receipt. Contract calls are routed to the chain by the
token's address; ABI encoding for Multicall3 uses the SDK's own ABIs and eth-abi.
"""

from __future__ import annotations

from typing import Any

from eth_abi import decode, encode
from eth_utils import keccak
from x402.mechanisms.evm.constants import (
    AUTHORIZATION_STATE_ABI,
    BALANCE_OF_ABI,
    NAME_ABI,
    TRANSFER_WITH_AUTHORIZATION_BYTES_ABI,
    TRANSFER_WITH_AUTHORIZATION_VRS_ABI,
    TX_STATUS_SUCCESS,
    VERSION_ABI,
)
from x402.mechanisms.evm.eip712 import hash_typed_data
from x402.mechanisms.evm.exact.eip3009_utils import (
    ERC20_TRANSFER_EVENT_TOPIC,
    ParsedEIP3009Authorization,
)
from x402.mechanisms.evm.types import TransactionReceipt, TypedDataDomain
from x402.mechanisms.evm.utils import normalize_address
from x402.mechanisms.evm.verify import verify_eoa_signature

from sandbox.facilitator.chain import (
    MULTICALL3_ADDRESS,
    ContractRevert,
    OfflineChain,
    Receipt,
    Token,
)

FACILITATOR_ADDRESS = normalize_address("0x" + keccak(text="offline facilitator")[-20:].hex())

DECIMALS_ABI = [
    {
        "inputs": [],
        "name": "decimals",
        "outputs": [{"name": "", "type": "uint8"}],
        "stateMutability": "view",
        "type": "function",
    }
]
_TOKEN_ABIS = (
    BALANCE_OF_ABI,
    NAME_ABI,
    VERSION_ABI,
    DECIMALS_ABI,
    AUTHORIZATION_STATE_ABI,
    TRANSFER_WITH_AUTHORIZATION_VRS_ABI,
    TRANSFER_WITH_AUTHORIZATION_BYTES_ABI,
)
_ERROR_STRING_SELECTOR = bytes.fromhex("08c379a0")


def _function_types(abi: list[dict[str, Any]]) -> tuple[str, list[str], list[str]]:
    (function,) = (entry for entry in abi if entry.get("type") == "function")
    inputs = [item["type"] for item in function["inputs"]]
    outputs = [item["type"] for item in function["outputs"]]
    return function["name"], inputs, outputs


def _selector(name: str, inputs: list[str]) -> bytes:
    return keccak(text=f"{name}({','.join(inputs)})")[:4]


_TOKEN_FUNCTIONS = {
    _selector(name, inputs): (name, inputs, outputs)
    for name, inputs, outputs in map(_function_types, _TOKEN_ABIS)
}


class OfflineEvmSigner:
    def __init__(self, chain: OfflineChain, *, address: str = FACILITATOR_ADDRESS):
        self.chain = chain
        self.address = address

    def get_addresses(self) -> list[str]:
        return [self.address]

    def get_chain_id(self) -> int:
        # The signer serves every chain of the OfflineChain (calls are routed by token
        # address); this answers for the first one.
        return self.chain.token(self.chain.networks[0]).chain_id

    def get_code(self, address: str) -> bytes:
        return self.chain.code_at(address)

    def get_balance(self, address: str, token_address: str) -> int:
        return self.chain.balance_of(self._token(token_address).network, address)

    def read_contract(
        self, address: str, abi: list[dict[str, Any]], function_name: str, *args: Any
    ) -> Any:
        if address.lower() == MULTICALL3_ADDRESS.lower() and function_name == "tryAggregate":
            _require_success, calls = args
            return [self._try_call(target, call_data) for target, call_data in calls]
        return self._call(self._token(address), function_name, args, execute=False)

    def write_contract(
        self,
        address: str,
        abi: list[dict[str, Any]],
        function_name: str,
        *args: Any,
        data_suffix: str | None = None,
    ) -> str:
        if function_name != "transferWithAuthorization":
            raise ContractRevert(f"the offline token has no {function_name} transaction")
        return self._call(self._token(address), function_name, args, execute=True)

    def send_transaction(self, to: str, data: bytes) -> str:
        # Only ERC-6492 smart-wallet deployments send raw transactions; the double holds
        # externally owned accounts only.
        raise ContractRevert("the offline chain deploys no contracts")

    def wait_for_transaction_receipt(self, tx_hash: str) -> TransactionReceipt:
        receipt = self.chain.receipt(tx_hash)
        if receipt is None:
            raise TimeoutError(f"transaction {tx_hash} is not on the offline chain")
        return TransactionReceipt(
            status=TX_STATUS_SUCCESS,
            block_number=receipt.block_number,
            tx_hash=receipt.tx_hash,
            logs=transfer_logs(receipt),
        )

    def verify_typed_data(
        self,
        address: str,
        domain: TypedDataDomain,
        types: dict[str, Any],
        primary_type: str,
        message: dict[str, Any],
        signature: bytes,
    ) -> bool:
        plain_types = {
            name: [field if isinstance(field, dict) else vars(field) for field in fields]
            for name, fields in types.items()
            if name != "EIP712Domain"
        }
        digest = hash_typed_data(domain, plain_types, primary_type, message)
        try:
            return verify_eoa_signature(digest, signature, address)
        except ValueError:
            return False

    # -- dispatch ------------------------------------------------------------------------

    def _token(self, address: str) -> Token:
        token = self.chain.token_at(address)
        if token is None:
            raise ContractRevert(f"no contract at {address}")
        return token

    def _call(self, token: Token, function_name: str, args: tuple, *, execute: bool) -> Any:
        network = token.network
        if function_name == "balanceOf":
            return self.chain.balance_of(network, args[0])
        if function_name == "name":
            return token.name
        if function_name == "version":
            return token.version
        if function_name == "decimals":
            return token.decimals
        if function_name == "authorizationState":
            return self.chain.authorization_state(network, args[0], args[1])
        if function_name == "transferWithAuthorization":
            authorization = ParsedEIP3009Authorization(
                from_address=args[0],
                to=args[1],
                value=int(args[2]),
                valid_after=int(args[3]),
                valid_before=int(args[4]),
                nonce=bytes(args[5]),
            )
            if len(args) == 9:  # the (v, r, s) overload
                v, r, s = args[6:]
                signature = bytes(r) + bytes(s) + bytes([int(v)])
            else:
                signature = bytes(args[6])
            tx_hash = self.chain.transfer_with_authorization(
                token.address, authorization, signature, execute=execute
            )
            return tx_hash if execute else None
        raise ContractRevert(f"the offline token has no function {function_name}")

    def _try_call(self, target: str, call_data: bytes) -> tuple[bool, bytes]:
        """One Multicall3 sub-call: (success, ABI-encoded return data or revert data)."""
        function = _TOKEN_FUNCTIONS.get(bytes(call_data[:4]))
        token = self.chain.token_at(target)
        if function is None or token is None:
            return (False, b"")
        name, inputs, outputs = function
        try:
            args = decode(inputs, bytes(call_data[4:]))
            result = self._call(token, name, tuple(args), execute=False)
        except ContractRevert as revert:
            return (False, _ERROR_STRING_SELECTOR + encode(["string"], [revert.reason]))
        return (True, encode(outputs, [result]) if outputs else b"")


def transfer_logs(receipt: Receipt) -> list[dict[str, Any]]:
    """The ERC-20 `Transfer` events of a receipt, as `eth_getTransactionReceipt` lists them."""
    return [
        {
            "address": receipt.token,
            "topics": [
                ERC20_TRANSFER_EVENT_TOPIC,
                "0x" + bytes.fromhex(transfer.sender[2:]).rjust(32, b"\0").hex(),
                "0x" + bytes.fromhex(transfer.recipient[2:]).rjust(32, b"\0").hex(),
            ],
            "data": "0x" + transfer.value.to_bytes(32, "big").hex(),
        }
        for transfer in receipt.transfers
    ]
