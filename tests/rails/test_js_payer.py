"""The JavaScript payer (`@x402/fetch` 2.x) pays a small x402 v2 resource whose payments the
local facilitator double verifies and settles."""

import json
import threading
import uuid
from wsgiref.simple_server import make_server

import httpx
import pytest
from eth_account import Account
from x402.http import (
    FacilitatorConfig,
    HTTPFacilitatorClientSync,
    decode_payment_signature_header,
    encode_payment_required_header,
    encode_payment_response_header,
)
from x402.schemas import PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse

from sandbox.facilitator import serve_in_thread
from sandbox.facilitator.server import QuietHandler, ThreadingWSGIServer
from tests.rails.js_payer import install_js_payer, run_js_payer

BASE = "eip155:8453"
PRICE = 25_000
SELLER = Account.create().address


@pytest.fixture(scope="module")
def js_payer():
    return install_js_payer()


@pytest.fixture
def facilitator():
    server = serve_in_thread()
    yield server
    server.close()


class PaidResource:
    """Answers 402 with a v2 PAYMENT-REQUIRED header until a request carries a payment the
    facilitator verifies and settles; then 200 with PAYMENT-RESPONSE and an echo of the call."""

    def __init__(self, facilitator_url: str, requirements: PaymentRequirements, *, batched: bool):
        self.facilitator_url = facilitator_url
        self.requirements = requirements
        self.batched = batched
        self.facilitator = HTTPFacilitatorClientSync(FacilitatorConfig(url=facilitator_url))

    def __call__(self, environ, start_response):
        url = f"http://{environ['HTTP_HOST']}{environ['PATH_INFO']}"
        header = environ.get("HTTP_PAYMENT_SIGNATURE")
        if not header:
            return self._payment_required(start_response, url, "payment required")
        payment = decode_payment_signature_header(header)
        verified = self.facilitator.verify(payment, self.requirements)
        if not verified.is_valid:
            return self._payment_required(start_response, url, verified.invalid_reason)
        settled = self._settle(payment)
        if not settled.success:
            return self._payment_required(start_response, url, settled.error_reason)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        sent = environ["wsgi.input"].read(length) if length else b""
        body = json.dumps(
            {
                "method": environ["REQUEST_METHOD"],
                "query": environ.get("QUERY_STRING", ""),
                "body": json.loads(sent) if sent else None,
            }
        ).encode()
        start_response(
            "200 OK",
            [
                ("Content-Type", "application/json"),
                ("PAYMENT-RESPONSE", encode_payment_response_header(settled)),
            ],
        )
        return [body]

    def _settle(self, payment) -> SettleResponse:
        if not self.batched:
            return self.facilitator.settle(payment, self.requirements)
        answer = httpx.post(
            f"{self.facilitator_url}/batches",
            json={
                "batchId": str(uuid.uuid4()),
                "x402Version": 2,
                "payments": [
                    {
                        "paymentPayload": payment.model_dump(by_alias=True, exclude_none=True),
                        "paymentRequirements": self.requirements.model_dump(
                            by_alias=True, exclude_none=True
                        ),
                    }
                ],
            },
        ).json()
        (result,) = answer["results"]
        return SettleResponse(
            success=result["success"],
            error_reason=result.get("errorReason"),
            payer=result["payer"],
            transaction=answer["transaction"],
            network=answer["network"],
        )

    def _payment_required(self, start_response, url, error):
        required = PaymentRequired(
            error=error,
            resource=ResourceInfo(url=url, description="a paid test resource"),
            accepts=[self.requirements],
        )
        start_response(
            "402 Payment Required",
            [
                ("Content-Type", "application/json"),
                ("PAYMENT-REQUIRED", encode_payment_required_header(required)),
            ],
        )
        return [json.dumps({"error": error}).encode()]


@pytest.fixture
def serve():
    servers = []

    def start(app):
        server = make_server("127.0.0.1", 0, app, ThreadingWSGIServer, QuietHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def requirements_for(chain, *, batched: bool) -> PaymentRequirements:
    token = chain.token(BASE)
    extra = (
        {"name": "GatewayWalletBatched", "version": "1"}
        if batched
        else {"name": token.name, "version": token.version}
    )
    return PaymentRequirements(
        scheme="exact",
        network=BASE,
        asset=token.address,
        amount=str(PRICE),
        pay_to=SELLER,
        max_timeout_seconds=600,
        extra=extra,
    )


def test_the_fetch_wrapper_pays_an_exact_offer(js_payer, facilitator, serve):
    chain = facilitator.chain
    requirements = requirements_for(chain, batched=False)
    url = serve(PaidResource(facilitator.url, requirements, batched=False))
    seller_before = chain.balance_of(BASE, SELLER)

    result = run_js_payer(f"{url}/report?domain=stripe.com", "POST", {"limit": 3})

    assert result["status"] == 200
    assert result["body"] == {
        "method": "POST",
        "query": "domain=stripe.com",
        "body": {"limit": 3},
    }
    receipt = result["paymentResponse"]
    assert receipt["success"] is True and receipt["network"] == BASE
    assert receipt["payer"] == result["payer"] and len(receipt["transaction"]) == 66
    assert chain.balance_of(BASE, result["payer"]) == chain.initial_balance - PRICE
    assert chain.balance_of(BASE, SELLER) == seller_before + PRICE
    assert facilitator.app.settles_performed == 1


def test_the_fetch_wrapper_pays_an_np_offer_settled_in_a_batch(js_payer, facilitator, serve):
    chain = facilitator.chain
    requirements = requirements_for(chain, batched=True)
    url = serve(PaidResource(facilitator.url, requirements, batched=True))
    account = Account.create()

    result = run_js_payer(f"{url}/search", private_key="0x" + bytes(account.key).hex())

    assert result["status"] == 200 and result["body"]["method"] == "GET"
    assert result["payer"] == account.address
    assert result["paymentResponse"]["success"] is True
    assert chain.balance_of(BASE, account.address) == chain.initial_balance - PRICE
    assert facilitator.app.batches_performed == 1
    assert facilitator.app.settles_performed == 0


def test_an_unpaid_call_gets_the_402_when_the_payment_is_refused(js_payer, facilitator, serve):
    chain = facilitator.chain
    requirements = requirements_for(chain, batched=False)
    url = serve(PaidResource(facilitator.url, requirements, batched=False))
    account = Account.create()
    chain.set_balance(BASE, account.address, PRICE - 1)

    result = run_js_payer(url, private_key="0x" + bytes(account.key).hex())

    assert result["status"] == 402
    assert result["body"] == {"error": "invalid_exact_evm_insufficient_balance"}
    assert result["paymentResponse"] is None
    assert facilitator.app.settles_performed == 0
