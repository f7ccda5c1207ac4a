"""Off-the-shelf x402 clients pay for seed-catalog endpoints on the live test server: the
Python SDK's requests session (x402 v2 on x402 and np), and the JavaScript fetch wrapper."""

import pytest
import requests
from django.core.management import call_command
from rest_framework.test import APIClient
from x402 import x402ClientSync
from x402.http.clients import x402_requests
from x402.http.utils import decode_payment_response_header
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

from rails.models import RailPayment
from tests.rails.js_payer import run_js_payer
from tests.rails.payers import Payer

pytestmark = pytest.mark.django_db(transaction=True)

VERIFY = "/hunter/v2/email-verifier"


@pytest.fixture
def rails(gateway, facilitator, settings):
    """The live gateway's rails, served from the sandbox as `make run` serves them."""
    settings.LIVE_CALLS_USE_SANDBOX = True
    settings.X402_URL = f"{gateway}/rails/x402"
    settings.NP_URL = f"{gateway}/rails/np"
    settings.MPP_URL = f"{gateway}/rails/mpp"
    return settings


def paying_session():
    client = x402ClientSync()
    register_exact_evm_client(client, EthAccountSigner(Payer().account))
    return x402_requests(client)


@pytest.mark.parametrize("rail", ["x402", "np"])
def test_python_sdk_pays_a_seed_endpoint(rails, rail):
    url = f"{getattr(rails, rail.upper() + '_URL')}{VERIFY}"

    response = paying_session().get(url, params={"email": "ada@stripe.com"}, timeout=30)

    assert response.status_code == 200, response.text
    assert response.json()["data"]["email"] == "ada@stripe.com"
    assert decode_payment_response_header(response.headers["PAYMENT-RESPONSE"]).success
    payment = RailPayment.objects.get()
    assert payment.amount_micros == 5_000
    assert payment.status == ("settled" if rail == "x402" else "batched")
    if rail == "np":
        call_command("settle_np_batches")
        payment.refresh_from_db()
        assert payment.status == "settled"
    call_command("check_ledger")


def test_javascript_fetch_wrapper_pays_a_seed_endpoint(rails):
    answer = run_js_payer(f"{rails.X402_URL}{VERIFY}?email=ada%40stripe.com")

    assert answer["status"] == 200, answer
    assert answer["body"]["data"]["email"] == "ada@stripe.com"
    assert answer["paymentResponse"]["success"] is True
    assert RailPayment.objects.get().payer == answer["payer"].lower()


def test_every_address_details_and_search_hand_out_answers(rails, gateway, newcomer):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {newcomer.live_key}")
    details = api.post(
        "/v1/details", {"api": "hunter", "path": "/v2/email-verifier"}, format="json"
    ).json()

    unpaid = requests.get(details["usage"]["x402"], params={"email": "a@b.co"}, timeout=30)

    assert unpaid.status_code == 402
    assert "PAYMENT-REQUIRED" in unpaid.headers
    for offer in unpaid.json()["offers"]:
        assert requests.get(offer["url"], params={"email": "a@b.co"}, timeout=30).status_code == 402
    free = api.post(
        "/v1/details", {"api": "hunter", "path": "/v2/email-count"}, format="json"
    ).json()
    assert "x402" not in free["usage"]


def test_the_x402_snippets_run_as_given(rails, gateway, newcomer, tmp_path):
    """The x402-python and x402-fetch snippets of /v1/integrate, saved and run unchanged with a
    wallet key in PRIVATE_KEY, pay for the call and print the provider's answer."""
    import os
    import subprocess
    import sys

    from eth_account import Account

    from tests.rails.js_payer import install_js_payer

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {newcomer.live_key}")
    snippets = api.post(
        "/v1/integrate",
        {"api": "hunter", "path": "/v2/email-verifier", "format": "all"},
        format="json",
    ).json()["snippets"]
    env = {**os.environ, "PRIVATE_KEY": Account.create().key.hex()}
    if not env["PRIVATE_KEY"].startswith("0x"):
        env["PRIVATE_KEY"] = "0x" + env["PRIVATE_KEY"]

    python_file = tmp_path / "pay.py"
    python_file.write_text(snippets["x402-python"])
    python_run = subprocess.run(
        [sys.executable, str(python_file)], env=env, capture_output=True, text=True, timeout=120
    )
    js_file = install_js_payer() / "snippet.mjs"
    js_file.write_text(snippets["x402-fetch"])
    try:
        js_run = subprocess.run(
            ["node", str(js_file)], env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        js_file.unlink()

    assert python_run.returncode == 0, python_run.stderr
    assert python_run.stdout.splitlines()[0] == "200"
    assert js_run.returncode == 0, js_run.stderr
    assert js_run.stdout.startswith("200")
    assert RailPayment.objects.filter(status="settled").count() == 2
