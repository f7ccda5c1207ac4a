"""A new user adds $10 and spends it on POST /v1/run, over HTTP on a live gateway: by card (the
dashboard's page opens a Checkout session, Stripe's API mocked at the HTTP level, and Stripe's
signed webhook books the credits) and in USDC (the official x402 client pays the purchase route
through the local facilitator double)."""

import html
import os
import re
import subprocess
import sys

import pytest
import requests
import responses
from django.core.management import call_command
from django.test import Client
from eth_account import Account as Wallet

from credits.models import Purchase
from credits.services.accounts import account_for_user
from tests.credits.stripe_events import (
    STRIPE_API,
    completed,
    created_session,
    deliver_live,
    stripe_settings,
)
from tests.factories import make_persona
from tests.rails.conftest import facilitator
from tests.rails.payers import Payer

__all__ = ["facilitator"]

pytestmark = pytest.mark.django_db(transaction=True)

DOMAIN_SEARCH = {"api": "hunter", "path": "/v2/domain-search", "query": {"domain": "stripe.com"}}


def api(gateway: str, method: str, path: str, key: str, **options) -> requests.Response:
    return requests.request(
        method,
        f"{gateway}{path}",
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
        **options,
    )


def balance(gateway: str, key: str) -> str:
    return api(gateway, "GET", "/v1/credits/balance", key).json()["balance"]


def spend_on_run(gateway: str, key: str) -> dict:
    """Four domain-search results at a quarter of a cent each."""
    body = {**DOMAIN_SEARCH, "query": {**DOMAIN_SEARCH["query"], "limit": 4}}
    response = api(gateway, "POST", "/v1/run", key, json=body)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def live_rails(gateway, facilitator, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True
    settings.X402_URL = f"{gateway}/rails/x402"
    return settings


def test_a_new_user_adds_10_dollars_by_card_and_spends_them_on_run(gateway, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True
    stripe_settings(settings)
    newcomer = make_persona("dana@example.com")
    assert balance(gateway, newcomer.live_key) == "$0.00"
    assert api(gateway, "POST", "/v1/run", newcomer.live_key, json=DOMAIN_SEARCH).status_code == 402

    person = Client()
    person.force_login(newcomer.user)
    with responses.RequestsMock() as stripe:
        stripe.post(f"{STRIPE_API}/v1/checkout/sessions", json=created_session("cs_test_dana"))
        to_checkout = person.post("/balance/add", {"amount": "10"})
    assert to_checkout.status_code == 303
    assert to_checkout["Location"].startswith("https://checkout.stripe.com/")

    # The person pays on Stripe's page; Stripe tells the gateway, twice as it may.
    account = account_for_user(user=newcomer.user)
    paid = completed(account.pk, session_id="cs_test_dana", payment_intent="pi_dana")
    assert deliver_live(gateway, paid).status_code == 200
    assert deliver_live(gateway, paid).status_code == 200

    assert balance(gateway, newcomer.live_key) == "$10.00"
    run = spend_on_run(gateway, newcomer.live_key)
    assert run["billing"]["charged"] is True and run["priceCents"] == 1
    assert balance(gateway, newcomer.live_key) == "$9.99"
    assert Purchase.objects.get().payment_reference == "pi_dana"
    call_command("check_ledger")


def test_a_new_user_adds_10_dollars_in_usdc_and_spends_them_on_run(live_rails, gateway):
    from x402 import x402ClientSync
    from x402.http.clients import x402_requests
    from x402.mechanisms.evm.exact import register_exact_evm_client
    from x402.mechanisms.evm.signers import EthAccountSigner

    newcomer = make_persona("erin@example.com")
    client = x402ClientSync()
    register_exact_evm_client(client, EthAccountSigner(Payer().account))
    client.set_spend_controls({"max_amount_per_payment": "$10"})

    bought = x402_requests(client).post(
        f"{live_rails.X402_URL}/credits/purchase",
        json={"amountCents": 1000},
        headers={"Authorization": f"Bearer {newcomer.live_key}"},
        timeout=30,
    )

    assert bought.status_code == 200, bought.text
    assert bought.json()["balance"] == "$10.00"
    assert balance(gateway, newcomer.live_key) == "$10.00"
    spend_on_run(gateway, newcomer.live_key)
    assert balance(gateway, newcomer.live_key) == "$9.99"
    call_command("check_ledger")


def test_the_usdc_snippet_of_the_add_credits_page_runs_as_given(live_rails, gateway):
    newcomer = make_persona("fay@example.com")
    person = Client()
    person.force_login(newcomer.user)
    page = person.get("/balance/add").content.decode()
    snippet = html.unescape(re.search(r'<code id="usdc-purchase">(.*?)</code>', page, re.S)[1])
    private_key = Wallet.create().key.hex()
    env = {
        **os.environ,
        "PRIVATE_KEY": private_key if private_key.startswith("0x") else f"0x{private_key}",
        "GATEWAY_API_KEY": newcomer.live_key,
    }

    ran = subprocess.run(
        [sys.executable, "-c", snippet], env=env, capture_output=True, text=True, timeout=120
    )

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("200 ")
    assert balance(gateway, newcomer.live_key) == "$10.00"
