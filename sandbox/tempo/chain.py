"""An in-memory Tempo chain: TIP-20 balances, included transactions and their receipts."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import rlp
from eth_account import Account
from eth_hash.auto import keccak

TEMPO_CHAIN_ID = 4217
USDC_E = "0x20c000000000000000000000b9537d11c60e8b50"
DEFAULT_INITIAL_BALANCE = 1_000_000_000  # 1,000 tokens of 6 decimals

TRANSFER_SELECTOR = bytes.fromhex("a9059cbb")  # transfer(address,uint256)
TRANSFER_WITH_MEMO_SELECTOR = bytes.fromhex("95777d59")  # transferWithMemo(address,uint256,bytes32)
TRANSFER_TOPIC = "0x" + keccak(b"Transfer(address,address,uint256)").hex()
TRANSFER_WITH_MEMO_TOPIC = "0x" + keccak(b"TransferWithMemo(address,address,uint256,bytes32)").hex()
TEMPO_TX_TYPE = 0x76


class RejectedTransaction(Exception):
    """The node refuses the transaction before including it (a JSON-RPC error)."""


@dataclass(frozen=True)
class Transfer:
    token: str
    sender: str
    recipient: str
    amount: int
    memo: bytes | None


@dataclass
class TempoChain:
    """A single-node chain. Every address starts with ``initial_balance`` of every token."""

    chain_id: int = TEMPO_CHAIN_ID
    initial_balance: int = DEFAULT_INITIAL_BALANCE
    gas_price: int = 20_000_000_000
    block_number: int = 1
    receipts: dict[str, dict] = field(default_factory=dict)
    transactions: dict[str, dict] = field(default_factory=dict)
    calls: Counter = field(default_factory=Counter)
    _balances: dict[tuple[str, str], int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- reads ------------------------------------------------------------------------------

    def balance(self, token: str, address: str) -> int:
        return self._balances.get((token.lower(), address.lower()), self.initial_balance)

    def set_balance(self, token: str, address: str, amount: int) -> None:
        self._balances[(token.lower(), address.lower())] = amount

    def receipt(self, tx_hash: str) -> dict | None:
        return self.receipts.get(tx_hash.lower())

    def latest_block(self) -> dict:
        return {
            "number": hex(self.block_number),
            "timestamp": hex(int(time.time())),
            "hash": "0x" + keccak(self.block_number.to_bytes(32, "big")).hex(),
        }

    # -- writes -----------------------------------------------------------------------------

    def include(self, raw_tx: str) -> dict:
        """Include a signed type-0x76 transaction and return its receipt."""
        raw = bytes.fromhex(raw_tx.removeprefix("0x"))
        tx_hash = "0x" + keccak(raw).hex()
        sender, chain_id, valid_before, transfers = _decode(raw)
        if chain_id != self.chain_id:
            raise RejectedTransaction(f"invalid chain id {chain_id}, this chain is {self.chain_id}")
        if valid_before is not None and valid_before <= int(time.time()):
            raise RejectedTransaction("transaction expired: valid_before is in the past")
        with self._lock:
            if tx_hash in self.receipts:
                raise RejectedTransaction("nonce already used by an included transaction")
            self.block_number += 1
            funded = all(self.balance(t.token, t.sender) >= t.amount for t in transfers)
            logs = []
            if funded:
                for transfer in transfers:
                    self._move(transfer)
                    logs += _logs(transfer, tx_hash, self.block_number, len(logs))
            receipt = {
                "transactionHash": tx_hash,
                "transactionIndex": "0x0",
                "blockNumber": hex(self.block_number),
                "blockHash": self.latest_block()["hash"],
                "from": sender,
                "to": transfers[0].token if transfers else None,
                "status": "0x1" if funded else "0x0",
                "type": hex(TEMPO_TX_TYPE),
                "gasUsed": hex(270_000),
                "cumulativeGasUsed": hex(270_000),
                "effectiveGasPrice": hex(self.gas_price),
                "logs": logs,
            }
            self.receipts[tx_hash] = receipt
            self.transactions[tx_hash] = {"hash": tx_hash, "from": sender, "raw": raw_tx}
        return receipt

    def _move(self, transfer: Transfer) -> None:
        token = transfer.token
        self._balances[(token, transfer.sender)] = (
            self.balance(token, transfer.sender) - transfer.amount
        )
        self._balances[(token, transfer.recipient)] = (
            self.balance(token, transfer.recipient) + transfer.amount
        )


def _int(value: bytes) -> int:
    return int.from_bytes(value, "big") if value else 0


def _decode(raw: bytes) -> tuple[str, int, int | None, list[Transfer]]:
    """Sender, chain id, ``valid_before`` and TIP-20 transfers of a signed 0x76 transaction."""
    if not raw or raw[0] != TEMPO_TX_TYPE:
        raise RejectedTransaction("only Tempo (type 0x76) transactions are accepted")
    try:
        fields = rlp.decode(raw[1:])
    except rlp.DecodingError as error:
        raise RejectedTransaction(f"the transaction is not valid RLP: {error}") from None
    if not isinstance(fields, list) or len(fields) not in (14, 15):
        raise RejectedTransaction("the transaction does not have the fields of a 0x76 transaction")
    if fields[11] != b"":
        raise RejectedTransaction("fee-sponsored transactions are not accepted by this node")
    signature = fields[-1]
    if not isinstance(signature, bytes) or len(signature) != 65:
        raise RejectedTransaction("only secp256k1 sender signatures are accepted")
    signing_hash = keccak(bytes([TEMPO_TX_TYPE]) + rlp.encode(fields[:-1]))
    try:
        sender = Account._recover_hash(signing_hash, signature=signature).lower()
    except Exception as error:  # any malformed signature is a refusal
        raise RejectedTransaction(f"the signature does not recover: {error}") from None
    transfers = [_transfer(call, sender) for call in fields[4]]
    return sender, _int(fields[0]), _int(fields[8]) or None, [t for t in transfers if t]


def _transfer(call: list, sender: str) -> Transfer | None:
    to, _value, data = call[0], call[1], call[2]
    selector, args = data[:4], data[4:]
    if selector == TRANSFER_SELECTOR and len(args) >= 64:
        memo = None
    elif selector == TRANSFER_WITH_MEMO_SELECTOR and len(args) >= 96:
        memo = args[64:96]
    else:
        return None
    return Transfer(
        token="0x" + to.hex(),
        sender=sender,
        recipient="0x" + args[12:32].hex(),
        amount=int.from_bytes(args[32:64], "big"),
        memo=memo,
    )


def _topic(address: str) -> str:
    return "0x" + address.removeprefix("0x").rjust(64, "0")


def _logs(transfer: Transfer, tx_hash: str, block: int, first_index: int) -> list[dict]:
    """What a TIP-20 token emits for one transfer: ``Transfer``, and ``TransferWithMemo`` when
    the call carried a memo."""
    data = "0x" + transfer.amount.to_bytes(32, "big").hex()
    topics = [[TRANSFER_TOPIC, _topic(transfer.sender), _topic(transfer.recipient)]]
    if transfer.memo is not None:
        topics.append(
            [
                TRANSFER_WITH_MEMO_TOPIC,
                _topic(transfer.sender),
                _topic(transfer.recipient),
                "0x" + transfer.memo.hex(),
            ]
        )
    return [
        {
            "address": transfer.token,
            "topics": log_topics,
            "data": data,
            "logIndex": hex(first_index + index),
            "blockNumber": hex(block),
            "transactionHash": tx_hash,
            "removed": False,
        }
        for index, log_topics in enumerate(topics)
    ]
