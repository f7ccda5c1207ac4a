"""The chat-completion endpoint on the rails, called as its users call it: the official openai
SDK with the x402 SDK's paying httpx client as its ``http_client``, pointed at the rail's chat
path. A stream is paid in full (the offer's amount, the most the call can cost) before its
first event, and relayed as the provider sends it."""

import asyncio
import json

import pytest
import requests
from django.core.management import call_command
from eth_account import Account
from openai import AsyncOpenAI
from x402 import x402Client
from x402.http.clients import x402HttpxClient
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

from rails.models import RailPayment

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = "/zhipu-glm/api/paas/v4"
MESSAGES = [{"role": "user", "content": "Explain pay-per-call rails in a few words"}]


@pytest.fixture
def rails(gateway, facilitator, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True
    settings.X402_URL = f"{gateway}/rails/x402"
    settings.NP_URL = f"{gateway}/rails/np"
    return settings


def paying_openai(base_url: str) -> AsyncOpenAI:
    client = x402Client()
    register_exact_evm_client(client, EthAccountSigner(Account.create()))
    return AsyncOpenAI(
        api_key="unused",
        base_url=base_url,
        http_client=x402HttpxClient(client, timeout=30),
        max_retries=0,
    )


async def streamed_and_whole(base_url: str):
    client = paying_openai(base_url)
    raw = await client.chat.completions.with_raw_response.create(
        model="glm-4.5", messages=MESSAGES, stream=True
    )
    pieces = [
        chunk.choices[0].delta.content
        async for chunk in raw.parse()
        if chunk.choices and chunk.choices[0].delta.content
    ]
    whole = await client.chat.completions.create(model="glm-4.5", messages=MESSAGES)
    return raw.headers, pieces, whole


@pytest.mark.parametrize("rail", ["x402", "np"])
def test_the_openai_sdk_pays_and_streams_a_chat_completion_on_a_rail(rails, rail):
    base_url = f"{getattr(rails, rail.upper() + '_URL')}{CHAT}"

    headers, pieces, whole = asyncio.run(streamed_and_whole(base_url))

    assert headers["content-type"] == "text/event-stream"
    assert decode_payment_response_header(headers["PAYMENT-RESPONSE"]).success
    assert len(pieces) > 3
    assert "".join(pieces) == whole.choices[0].message.content
    streamed = RailPayment.objects.get(request_id=headers["X-Request-Id"])
    # The payment covers the most the call can cost, whatever the stream comes to.
    assert streamed.amount_micros == int(float(headers["X-Price-Max-Cents"]) * 10_000)
    assert streamed.status == ("settled" if rail == "x402" else "batched")
    call_command("check_ledger")


def test_an_unpaid_stream_gets_the_offers_and_reaches_no_provider(rails):
    response = requests.post(
        f"{rails.X402_URL}{CHAT}/chat/completions",
        json={"model": "glm-4.5", "messages": MESSAGES, "stream": True},
        timeout=30,
    )

    assert response.status_code == 402
    body = response.json()
    assert {offer["method"] for offer in body["offers"]} == {"mpp", "x402", "np"}
    assert "PAYMENT-REQUIRED" in response.headers
    assert not RailPayment.objects.exists()


def test_a_paid_stream_ends_with_the_gateways_summary_and_the_providers_done(rails):
    url = f"{rails.X402_URL}{CHAT}/chat/completions"
    body = {"model": "glm-4.5", "messages": MESSAGES, "stream": True}
    events = asyncio.run(_raw_events(url, body))

    assert events[-1] == "data: [DONE]"
    summary = json.loads(events[-2].removeprefix(": gateway "))
    assert summary["ending"] == "completed"
    assert summary["priceCents"] > 0


async def _raw_events(url: str, body: dict) -> list[str]:
    client = x402Client()
    register_exact_evm_client(client, EthAccountSigner(Account.create()))
    async with x402HttpxClient(client, timeout=30) as http:
        response = await http.post(url, json=body)
        return [event for event in response.text.split("\n\n") if event.strip()]
