"""Streamed chat completions through POST /v1/run on the live test server, with the official
openai SDK as the client (through a small adapter for the run envelope) and the sandbox as the
provider: tokens arrive as they are produced and the charge is the usage the provider reports,
or, for a stream cut short, what was relayed."""

import json
import math
import time

import openai
import pytest
import requests
from django.core.management import call_command

from calls.pricing import estimated_input_tokens
from catalog.models import Endpoint, ProviderApi
from credits.models import UsageEvent
from credits.services.accounts import account_for_user
from tests.calls.openai_adapter import CHAT_API, CHAT_PATH, openai_through_run

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = [{"role": "user", "content": "Tell me how a streaming gateway relays tokens"}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture
def chat(gateway, settings):
    """The live gateway with live keys served by the sandbox, as `make run` serves them."""
    settings.LIVE_CALLS_USE_SANDBOX = True
    return Endpoint.objects.get(api__slug=CHAT_API, path=CHAT_PATH)


def token_price(chat: Endpoint, input_tokens: int, output_tokens: int) -> int:
    micros = input_tokens * chat.input_micros_per_mtok + output_tokens * chat.output_micros_per_mtok
    return math.ceil(micros / 1_000_000)


def relayed_price(chat: Endpoint, body: dict, relayed: list[str]) -> int:
    """The documented price of a stream cut short: the input estimate plus the output relayed
    (a token per four characters, at least one per chunk)."""
    output = max(len(relayed), math.ceil(sum(map(len, relayed)) / 4))
    return token_price(chat, estimated_input_tokens(body), output)


def balance_of(persona) -> int:
    return account_for_user(user=persona.user).balance_micros


def raw_stream(gateway: str, key: str, body: dict, **headers) -> requests.Response:
    return requests.post(
        f"{gateway}/v1/run",
        json={"api": CHAT_API, "path": CHAT_PATH, "body": {**body, "stream": True}},
        headers={"Authorization": f"Bearer {key}", **headers},
        stream=True,
        timeout=30,
    )


def events_of(response: requests.Response) -> list[str]:
    return [event for event in response.text.split("\n\n") if event.strip()]


def content_of(events: list[str]) -> list[str]:
    pieces = []
    for event in events:
        if event.startswith("data: {"):
            for choice in json.loads(event[6:]).get("choices", []):
                piece = (choice.get("delta") or {}).get("content")
                if piece:
                    pieces.append(piece)
    return pieces


def test_the_openai_sdk_streams_through_run_in_order_and_is_charged_the_usage(
    gateway, chat, newcomer
):
    client, transport = openai_through_run(gateway, newcomer.live_key)
    whole = client.chat.completions.create(model="glm-4.5", messages=MESSAGES)

    pieces, usage, chunks = [], None, 0
    stream = client.chat.completions.create(
        model="glm-4.5", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    for chunk in stream:
        chunks += 1
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        if chunk.usage:
            usage = chunk.usage

    assert chunks > 3
    assert "".join(pieces) == whole.choices[0].message.content
    assert usage.completion_tokens == whole.usage.completion_tokens
    event = UsageEvent.objects.get(request_id=transport.last_response.headers["X-Request-Id"])
    assert event.status == "completed"
    assert event.cost_micros == token_price(chat, usage.prompt_tokens, usage.completion_tokens)
    call_command("check_ledger")


def test_a_stream_names_its_request_and_price_and_ends_with_the_providers_done(
    gateway, chat, newcomer
):
    response = raw_stream(gateway, newcomer.live_key, {"model": "glm-4.5", "messages": MESSAGES})

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["X-Accel-Buffering"] == "no"
    assert "Content-Length" not in response.headers
    assert "Content-Encoding" not in response.headers
    events = events_of(response)
    assert events[-1] == "data: [DONE]"
    assert events[-2].startswith(": gateway ")
    trailer = json.loads(events[-2].removeprefix(": gateway "))
    request_id = response.headers["X-Request-Id"]
    event = UsageEvent.objects.get(request_id=request_id)
    assert trailer == {
        "requestId": request_id,
        "priceCents": event.cost_micros / 10_000,
        "charged": True,
        "ending": "completed",
    }
    assert float(response.headers["X-Price-Max-Cents"]) >= trailer["priceCents"]


def test_the_usage_chunk_reaches_only_callers_that_asked_for_it(gateway, chat, newcomer):
    plain = events_of(
        raw_stream(gateway, newcomer.live_key, {"model": "glm-4.5", "messages": MESSAGES})
    )
    asked = events_of(
        raw_stream(
            gateway,
            newcomer.live_key,
            {"model": "glm-4.5", "messages": MESSAGES, "stream_options": {"include_usage": True}},
        )
    )

    def usage_only(events):
        return [
            event
            for event in events
            if event.startswith("data: {") and json.loads(event[6:]).get("choices") == []
        ]

    assert content_of(plain) == content_of(asked)
    assert len(usage_only(asked)) <= 1
    assert usage_only(plain) == []
    # Whichever chunk carries the usage, the call is priced from it.
    costs = {e.cost_micros for e in UsageEvent.objects.filter(status="completed")}
    assert len(costs) == 1 and costs.pop() > 0


def test_tokens_arrive_as_the_provider_sends_them(gateway, chat, newcomer):
    body = {"model": "glm-4.5", "messages": MESSAGES, "sandbox_chunk_delay_ms": 150}
    response = raw_stream(gateway, newcomer.live_key, body)

    arrivals = []
    for line in response.iter_lines():
        if line.startswith(b"data: {"):
            arrivals.append(time.monotonic())
    assert len(arrivals) > 4
    # Relayed one by one, not gathered: the first arrives long before the last.
    assert arrivals[-1] - arrivals[0] > 0.1 * (len(arrivals) - 1)


def test_a_tool_call_round_trip_streams_through_run(gateway, chat, newcomer):
    client, _ = openai_through_run(gateway, newcomer.live_key)
    messages = [{"role": "user", "content": "Use get_weather to look up Paris"}]

    calls = {}
    for chunk in client.chat.completions.create(
        model="glm-4.5", messages=messages, tools=[WEATHER_TOOL], stream=True
    ):
        for delta in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = delta.id or call["id"]
            if delta.function:
                call["name"] += delta.function.name or ""
                call["arguments"] += delta.function.arguments or ""

    assert [call["name"] for call in calls.values()] == ["get_weather"]
    call = calls[0]
    assert "city" in json.loads(call["arguments"])
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call["id"], "content": '{"temperature_c": 18}'},
    ]
    reply = client.chat.completions.create(model="glm-4.5", messages=messages, tools=[WEATHER_TOOL])
    assert reply.choices[0].message.content


def test_image_parts_are_accepted_and_counted(gateway, chat, newcomer):
    client, _ = openai_through_run(gateway, newcomer.live_key)
    text = {"type": "text", "text": "What is in this picture?"}
    image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}

    def prompt_tokens(content):
        usage = None
        for chunk in client.chat.completions.create(
            model="glm-4v-plus",
            messages=[{"role": "user", "content": content}],
            stream=True,
            stream_options={"include_usage": True},
        ):
            usage = chunk.usage or usage
        return usage.prompt_tokens

    assert prompt_tokens([text, image]) > prompt_tokens([text])


def test_a_test_key_streams_from_the_sandbox_and_is_never_charged(gateway, chat, newcomer):
    before = balance_of(newcomer)
    events = events_of(
        raw_stream(gateway, newcomer.test_key, {"model": "glm-4.5", "messages": MESSAGES})
    )

    assert content_of(events)
    assert json.loads(events[-2].removeprefix(": gateway "))["charged"] is False
    assert balance_of(newcomer) == before


def test_a_stream_the_provider_breaks_is_charged_what_was_relayed(gateway, chat, newcomer):
    body = {
        "model": "glm-4.5",
        "messages": MESSAGES,
        "sandbox_fault": "reset",
        "sandbox_after_chunks": 4,
    }
    client, transport = openai_through_run(gateway, newcomer.live_key)

    relayed = []
    with pytest.raises(openai.APIError, match=r"reset|connection"):
        for chunk in client.chat.completions.create(
            model="glm-4.5",
            messages=MESSAGES,
            stream=True,
            extra_body={"sandbox_fault": "reset", "sandbox_after_chunks": 4},
        ):
            if chunk.choices and chunk.choices[0].delta.content:
                relayed.append(chunk.choices[0].delta.content)

    assert 0 < len(relayed) < 4
    event = UsageEvent.objects.get(request_id=transport.last_response.headers["X-Request-Id"])
    assert event.status == "completed"
    assert event.cost_micros == relayed_price(chat, {**body, "stream": True}, relayed)
    call_command("check_ledger")


def test_a_stalled_stream_is_cut_at_the_providers_timeout_and_charged_what_was_relayed(
    gateway, chat, newcomer
):
    ProviderApi.objects.filter(slug=CHAT_API).update(timeout_seconds=1)
    body = {
        "model": "glm-4.5",
        "messages": MESSAGES,
        "sandbox_fault": "stall",
        "sandbox_after_chunks": 3,
    }
    started = time.monotonic()
    response = raw_stream(gateway, newcomer.live_key, body)
    events = events_of(response)

    assert time.monotonic() - started < 10
    assert "did not answer within 1 seconds" in events[-2]
    trailer = json.loads(events[-1].removeprefix(": gateway "))
    assert trailer["ending"] == "broken"
    event = UsageEvent.objects.get(request_id=response.headers["X-Request-Id"])
    assert event.cost_micros == relayed_price(chat, {**body, "stream": True}, content_of(events))
    assert trailer["priceCents"] == event.cost_micros / 10_000


def test_a_caller_who_leaves_mid_stream_is_charged_what_was_relayed_and_no_more(
    gateway, chat, newcomer
):
    long_reply = {"model": "glm-4.5", "messages": MESSAGES, "max_tokens": 2000}
    whole = requests.post(
        f"{gateway}/v1/run",
        json={"api": CHAT_API, "path": CHAT_PATH, "body": long_reply},
        headers={"Authorization": f"Bearer {newcomer.live_key}"},
        timeout=30,
    ).json()
    full_price = round(whole["priceCents"] * 10_000)

    response = raw_stream(gateway, newcomer.live_key, {**long_reply, "sandbox_chunk_delay_ms": 200})
    read = []
    for line in response.iter_lines():
        read += content_of([line.decode()])
        if len(read) == 2:
            break
    response.close()

    request_id = response.headers["X-Request-Id"]
    deadline = time.monotonic() + 15
    while not UsageEvent.objects.filter(request_id=request_id).exists():
        assert time.monotonic() < deadline, "the stream was never settled"
        time.sleep(0.2)
    event = UsageEvent.objects.get(request_id=request_id)
    assert event.status == "completed"
    assert 0 < event.cost_micros < full_price
    call_command("check_ledger")


def test_idempotency_keys_are_refused_on_streams(gateway, chat, newcomer):
    response = raw_stream(
        gateway,
        newcomer.live_key,
        {"model": "glm-4.5", "messages": MESSAGES},
        **{"Idempotency-Key": "k1"},
    )

    assert response.status_code == 400
    assert "cannot be replayed" in response.json()["error"]


def test_a_stream_beyond_the_balance_is_refused_before_the_provider_is_called(
    gateway, chat, charlie
):
    response = raw_stream(gateway, charlie.live_key, {"model": "glm-4.5", "messages": MESSAGES})

    assert response.status_code == 402
    assert response.json()["code"] == "INSUFFICIENT_CREDITS"
