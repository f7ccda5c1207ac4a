"""The local Tempo chain (sandbox.tempo) as `python -m sandbox.tempo` serves it: the SDK's client
builds a transfer against it, and it includes the signed transaction with the logs the SDK's
server checks."""

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mpp import Challenge

from sandbox.tempo.chain import TRANSFER_WITH_MEMO_TOPIC, USDC_E
from tests.rails.mpp_payers import MppPayer

ROOT = Path(__file__).resolve().parents[2]
RECIPIENT = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"


@pytest.fixture
def chain_url():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"}
    server = subprocess.Popen(
        [sys.executable, "-m", "sandbox.tempo", "--port", str(port), "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait()


def rpc(url: str, method: str, *params):
    return httpx.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    ).json()


def test_a_signed_transfer_is_included_with_its_logs(chain_url):
    payer = MppPayer(chain_url)
    challenge = Challenge.create(
        secret_key="k",
        realm="gateway.test",
        method="tempo",
        intent="charge",
        request={
            "amount": "5000",
            "currency": USDC_E,
            "recipient": RECIPIENT,
            "methodDetails": {"chainId": 4217},
        },
        expires="2999-01-01T00:00:00Z",
    )
    credential = asyncio.run(payer.credential(challenge))
    raw_tx = credential.payload["signature"]

    receipt = rpc(chain_url, "eth_sendRawTransactionSync", raw_tx, 10_000)["result"]

    assert rpc(chain_url, "eth_chainId")["result"] == hex(4217)
    assert receipt["status"] == "0x1"
    assert receipt["from"] == payer.address.lower()
    memo_log = next(log for log in receipt["logs"] if log["topics"][0] == TRANSFER_WITH_MEMO_TOPIC)
    assert memo_log["address"] == USDC_E
    assert memo_log["topics"][2].endswith(RECIPIENT[2:].lower())
    assert int(memo_log["data"], 16) == 5000
    assert rpc(chain_url, "eth_getTransactionReceipt", receipt["transactionHash"])["result"] == (
        receipt
    )
    again = rpc(chain_url, "eth_sendRawTransactionSync", raw_tx, 10_000)
    assert "already used" in again["error"]["message"]
