"""The local x402 facilitator double, paid by the official x402 client over HTTP."""

import subprocess
import sys
import threading
import time

import httpx
import pytest
from eth_account import Account
from x402 import x402ClientSync
from x402.http import FacilitatorConfig, HTTPFacilitatorClientSync
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequired, PaymentRequirements, ResourceInfo
from x402.schemas.v1 import PaymentRequiredV1, PaymentRequirementsV1

from sandbox.facilitator import serve_in_thread

BASE = "eip155:8453"
BASE_SEPOLIA = "eip155:84532"
PRICE = 12_500  # $0.0125 in USDC base units
SELLER = Account.create().address


@pytest.fixture
def facilitator():
    server = serve_in_thread()
    yield server
    server.close()


@pytest.fixture
def http(facilitator):
    client = HTTPFacilitatorClientSync(FacilitatorConfig(url=facilitator.url, timeout=10))
    yield client
    client.close()


class Buyer:
    def __init__(self):
        self.account = Account.create()
        self.client = register_exact_evm_client(x402ClientSync(), self.account)

    @property
    def address(self):
        return self.account.address

    def pay(self, offer):
        if isinstance(offer, PaymentRequirementsV1):
            return self.client.create_payment_payload(
                PaymentRequiredV1(x402_version=1, accepts=[offer])
            )
        return self.client.create_payment_payload(
            PaymentRequired(resource=ResourceInfo(url="http://provider.test/x"), accepts=[offer])
        )


@pytest.fixture
def buyer():
    return Buyer()


def offer(chain, network=BASE, *, amount=PRICE, pay_to=None, batched=False, timeout=300):
    token = chain.token(network)
    extra = (
        {"name": "GatewayWalletBatched", "version": "1"}
        if batched
        else {"name": token.name, "version": token.version}
    )
    return PaymentRequirements(
        scheme="exact",
        network=network,
        asset=token.address,
        amount=str(amount),
        pay_to=pay_to or SELLER,
        max_timeout_seconds=timeout,
        extra=extra,
    )


def v1_offer(chain, network="base-sepolia", *, amount=PRICE):
    token = chain.token(network)
    return PaymentRequirementsV1(
        scheme="exact",
        network=network,
        max_amount_required=str(amount),
        resource="http://provider.test/x",
        pay_to=SELLER,
        max_timeout_seconds=300,
        asset=token.address,
        extra={"name": token.name, "version": token.version},
    )


def with_authorization(payment, **changes):
    inner = dict(payment.payload)
    inner["authorization"] = {**inner["authorization"], **changes}
    return payment.model_copy(update={"payload": inner})


# -- exact payments through the SDK's facilitator -------------------------------------------


def test_it_lists_the_exact_kinds_of_the_networks_it_runs(http):
    kinds = {(k.x402_version, k.scheme, str(k.network)) for k in http.get_supported().kinds}

    assert kinds == {
        (2, "exact", BASE),
        (2, "exact", BASE_SEPOLIA),
        (1, "exact", "base"),
        (1, "exact", "base-sepolia"),
    }


def test_a_v2_payment_verifies_settles_and_moves_the_balance(facilitator, http, buyer):
    chain = facilitator.chain
    requirements = offer(chain)
    payment = buyer.pay(requirements)

    verified = http.verify(payment, requirements)
    settled = http.settle(payment, requirements)

    assert verified.is_valid and verified.payer == buyer.address
    assert settled.success and settled.network == BASE and settled.payer == buyer.address
    assert settled.transaction.startswith("0x") and len(settled.transaction) == 66
    assert chain.balance_of(BASE, buyer.address) == chain.initial_balance - PRICE
    assert chain.balance_of(BASE, SELLER) >= chain.initial_balance + PRICE
    nonce = payment.payload["authorization"]["nonce"]
    assert chain.authorization_state(BASE, buyer.address, nonce)
    assert facilitator.app.settles_performed == 1


def test_a_v1_payment_verifies_and_settles(facilitator, http, buyer):
    chain = facilitator.chain
    requirements = v1_offer(chain)
    payment = buyer.pay(requirements)
    seller_before = chain.balance_of(BASE_SEPOLIA, SELLER)

    verified = http.verify(payment, requirements)
    settled = http.settle(payment, requirements)

    assert payment.x402_version == 1 and verified.is_valid
    assert settled.success and settled.network == "base-sepolia"
    assert chain.balance_of(BASE_SEPOLIA, buyer.address) == chain.initial_balance - PRICE
    assert chain.balance_of(BASE_SEPOLIA, SELLER) == seller_before + PRICE


def test_the_same_payment_settles_only_once(facilitator, http, buyer):
    requirements = offer(facilitator.chain)
    payment = buyer.pay(requirements)

    first = http.settle(payment, requirements)
    again = http.settle(payment, requirements)

    assert first.success
    assert not again.success
    assert again.error_reason == "invalid_exact_evm_nonce_already_used"
    assert not http.verify(payment, requirements).is_valid
    assert facilitator.chain.balance_of(BASE, buyer.address) == (
        facilitator.chain.initial_balance - PRICE
    )


def test_concurrent_settlements_of_one_payment_settle_it_once(facilitator, buyer):
    requirements = offer(facilitator.chain)
    payment = buyer.pay(requirements)
    outcomes = []
    start = threading.Barrier(8)

    def settle():
        with HTTPFacilitatorClientSync(FacilitatorConfig(url=facilitator.url)) as client:
            start.wait()
            outcomes.append(client.settle(payment, requirements))

    threads = [threading.Thread(target=settle) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcome.success for outcome in outcomes) == [False] * 7 + [True]
    assert facilitator.app.settles_performed == 1
    key = (buyer.address.lower(), payment.payload["authorization"]["nonce"].lower())
    assert facilitator.app.settlements[key] == 1


def _expired(chain, buyer):
    requirements = offer(chain, timeout=2)
    return buyer.pay(requirements), requirements


def _tampered_value(chain, buyer):
    requirements = offer(chain)
    payment = with_authorization(buyer.pay(requirements), value=str(PRICE // 2))
    return payment, requirements.model_copy(update={"amount": str(PRICE // 2)})


def _tampered_signature(chain, buyer):
    requirements = offer(chain)
    payment = buyer.pay(requirements)
    signature = payment.payload["signature"]
    flipped = signature[:10] + ("0" if signature[10] != "0" else "1") + signature[11:]
    return payment.model_copy(update={"payload": {**payment.payload, "signature": flipped}}), (
        requirements
    )


def _wrong_amount(chain, buyer):
    requirements = offer(chain)
    return buyer.pay(requirements), requirements.model_copy(update={"amount": str(PRICE * 2)})


def _wrong_recipient(chain, buyer):
    requirements = offer(chain)
    other = Account.create().address
    return buyer.pay(requirements), requirements.model_copy(update={"pay_to": other})


def _wrong_network(chain, buyer):
    payment = buyer.pay(offer(chain, BASE_SEPOLIA))
    return payment, offer(chain, BASE)


def _wrong_amount_v1(chain, buyer):
    requirements = v1_offer(chain)
    return buyer.pay(requirements), requirements.model_copy(
        update={"max_amount_required": str(PRICE + 1)}
    )


def _empty_wallet(chain, buyer):
    chain.set_balance(BASE, buyer.address, PRICE - 1)
    requirements = offer(chain)
    return buyer.pay(requirements), requirements


@pytest.mark.parametrize(
    ("make_payment", "reason"),
    [
        (_expired, "invalid_exact_evm_payload_authorization_valid_before"),
        (_tampered_value, "invalid_exact_evm_payload_signature"),
        (_tampered_signature, "invalid_exact_evm_payload_signature"),
        (_wrong_amount, "invalid_exact_evm_payload_authorization_value_mismatch"),
        (_wrong_recipient, "invalid_exact_evm_payload_recipient_mismatch"),
        (_wrong_network, "network_mismatch"),
        (_wrong_amount_v1, "invalid_exact_evm_payload_authorization_value_mismatch"),
        (_empty_wallet, "invalid_exact_evm_insufficient_balance"),
    ],
)
def test_an_invalid_payment_is_refused_with_the_sdk_reason(
    facilitator, http, buyer, make_payment, reason
):
    payment, requirements = make_payment(facilitator.chain, buyer)

    verified = http.verify(payment, requirements)
    settled = http.settle(payment, requirements)

    assert (verified.is_valid, verified.invalid_reason) == (False, reason)
    assert (settled.success, settled.error_reason) == (False, reason)
    assert facilitator.app.settles_performed == 0


def test_a_signature_for_another_token_domain_is_refused(facilitator, http, buyer):
    chain = facilitator.chain
    requirements = offer(chain)
    wrong_domain = requirements.model_copy(update={"extra": {"name": "USDC", "version": "2"}})
    payment = buyer.pay(wrong_domain)

    verified = http.verify(payment, wrong_domain)

    assert (verified.is_valid, verified.invalid_reason) == (
        False,
        "invalid_exact_evm_payload_signature",
    )


def test_an_unknown_network_is_an_unsupported_scheme(facilitator, buyer):
    ethereum_usdc = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
    requirements = offer(facilitator.chain).model_copy(
        update={"network": "eip155:1", "asset": ethereum_usdc}
    )
    payment = buyer.pay(requirements)

    answer = httpx.post(
        f"{facilitator.url}/verify",
        json={
            "x402Version": 2,
            "paymentPayload": payment.model_dump(by_alias=True, exclude_none=True),
            "paymentRequirements": requirements.model_dump(by_alias=True, exclude_none=True),
        },
    )

    assert answer.status_code == 200
    assert answer.json()["isValid"] is False
    assert answer.json()["invalidReason"] == "unsupported_scheme"


# -- the np rail's batches ------------------------------------------------------------------


def batch_body(batch_id, *pairs):
    return {
        "batchId": batch_id,
        "x402Version": 2,
        "payments": [
            {
                "paymentPayload": payment.model_dump(by_alias=True, exclude_none=True),
                "paymentRequirements": requirements.model_dump(by_alias=True, exclude_none=True),
            }
            for payment, requirements in pairs
        ],
    }


def np_payment(chain, buyer, **offer_changes):
    requirements = offer(chain, batched=True, **offer_changes)
    return buyer.pay(requirements), requirements


def test_an_np_payment_verifies_against_the_batched_domain(facilitator, http, buyer):
    payment, requirements = np_payment(facilitator.chain, buyer)

    verified = http.verify(payment, requirements)

    assert verified.is_valid and verified.payer == buyer.address


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"amount": str(PRICE + 1)}, "invalid_exact_evm_payload_authorization_value_mismatch"),
        ({"pay_to": Account.create().address}, "invalid_exact_evm_payload_recipient_mismatch"),
        ({"network": BASE_SEPOLIA}, "network_mismatch"),
    ],
)
def test_an_np_payment_that_differs_from_the_offer_is_refused(
    facilitator, http, buyer, change, reason
):
    payment, requirements = np_payment(facilitator.chain, buyer)

    verified = http.verify(payment, requirements.model_copy(update=change))

    assert (verified.is_valid, verified.invalid_reason) == (False, reason)


def test_an_exact_signature_does_not_pay_an_np_offer(facilitator, http, buyer):
    chain = facilitator.chain
    exact_payment = buyer.pay(offer(chain))
    np_requirements = offer(chain, batched=True)
    presented = exact_payment.model_copy(update={"accepted": np_requirements})

    verified = http.verify(presented, np_requirements)

    assert (verified.is_valid, verified.invalid_reason) == (
        False,
        "invalid_exact_evm_payload_signature",
    )


def test_an_expiring_np_payment_is_refused(facilitator, http, buyer):
    payment, requirements = np_payment(facilitator.chain, buyer, timeout=3)

    verified = http.verify(payment, requirements)

    assert verified.invalid_reason == "invalid_exact_evm_payload_authorization_valid_before"


def test_a_batch_settles_its_payments_in_one_transaction(facilitator, http):
    chain = facilitator.chain
    buyers = [Buyer(), Buyer(), Buyer()]
    pairs = [np_payment(chain, b) for b in buyers]
    seller_before = chain.balance_of(BASE, SELLER)

    answer = httpx.post(f"{facilitator.url}/batches", json=batch_body("batch-1", *pairs))

    body = answer.json()
    assert answer.status_code == 200
    assert body["batchId"] == "batch-1" and body["success"] is True
    assert body["network"] == BASE and len(body["transaction"]) == 66
    assert [r["success"] for r in body["results"]] == [True, True, True]
    assert [r["payer"] for r in body["results"]] == [b.address for b in buyers]
    assert chain.balance_of(BASE, SELLER) == seller_before + 3 * PRICE
    for b in buyers:
        assert chain.balance_of(BASE, b.address) == chain.initial_balance - PRICE
    assert facilitator.app.batches_performed == 1
    assert facilitator.app.settles_performed == 0
    settled = pairs[0][0]
    assert http.verify(settled, pairs[0][1]).invalid_reason == (
        "invalid_exact_evm_nonce_already_used"
    )
    assert httpx.get(f"{facilitator.url}/batches/batch-1").json() == body


def test_a_repeated_batch_id_answers_the_recorded_batch_and_settles_nothing(facilitator, buyer):
    chain = facilitator.chain
    pair = np_payment(chain, buyer)
    first = httpx.post(f"{facilitator.url}/batches", json=batch_body("b-7", pair)).json()
    balance_after_first = chain.balance_of(BASE, buyer.address)

    again = httpx.post(f"{facilitator.url}/batches", json=batch_body("b-7", pair)).json()

    assert again == first
    assert chain.balance_of(BASE, buyer.address) == balance_after_first
    assert facilitator.app.batches_performed == 1


def test_concurrent_posts_of_one_batch_settle_it_once(facilitator):
    pairs = [np_payment(facilitator.chain, Buyer()) for _ in range(3)]
    answers = []
    start = threading.Barrier(8)

    def post():
        start.wait()
        answers.append(
            httpx.post(f"{facilitator.url}/batches", json=batch_body("raced", *pairs)).json()
        )

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(answers) == 8 and all(answer == answers[0] for answer in answers)
    assert [r["success"] for r in answers[0]["results"]] == [True, True, True]
    assert facilitator.app.batches_performed == 1
    assert sum(facilitator.app.settlements.values()) == 3


def test_a_payment_settled_by_another_batch_is_reported_used(facilitator, buyer):
    chain = facilitator.chain
    settled = np_payment(chain, buyer)
    fresh = np_payment(chain, Buyer())
    httpx.post(f"{facilitator.url}/batches", json=batch_body("first", settled))

    second = httpx.post(
        f"{facilitator.url}/batches", json=batch_body("second", settled, fresh, fresh)
    ).json()

    assert second["success"] is True
    assert [(r["success"], r.get("errorReason")) for r in second["results"]] == [
        (False, "nonce_already_used"),
        (True, None),
        (False, "nonce_already_used"),
    ]
    assert chain.balance_of(BASE, buyer.address) == chain.initial_balance - PRICE
    key = (buyer.address.lower(), settled[0].payload["authorization"]["nonce"].lower())
    assert facilitator.app.settlements[key] == 1


def test_invalid_payments_of_a_batch_fail_alone(facilitator, buyer):
    chain = facilitator.chain
    good = np_payment(chain, buyer)
    payment, requirements = np_payment(chain, Buyer())
    wrong_amount = (payment, requirements.model_copy(update={"amount": str(PRICE + 5)}))
    broke = Buyer()
    chain.set_balance(BASE, broke.address, 0)
    empty = np_payment(chain, broke)

    answer = httpx.post(
        f"{facilitator.url}/batches", json=batch_body("mixed", good, wrong_amount, empty)
    ).json()

    assert [(r["success"], r.get("errorReason")) for r in answer["results"]] == [
        (True, None),
        (False, "invalid_exact_evm_payload_authorization_value_mismatch"),
        (False, "invalid_exact_evm_insufficient_balance"),
    ]


def test_a_batch_of_nothing_valid_has_no_transaction(facilitator, buyer):
    payment, requirements = np_payment(facilitator.chain, buyer)
    pair = (
        with_authorization(payment, value="1"),
        requirements.model_copy(update={"amount": "1"}),
    )

    answer = httpx.post(f"{facilitator.url}/batches", json=batch_body("none", pair)).json()

    assert answer["success"] is False and answer["transaction"] == ""
    assert answer["results"][0]["errorReason"] == "invalid_exact_evm_payload_signature"
    assert facilitator.app.batches_performed == 0


def test_a_crash_after_a_batch_settles_is_answered_by_the_retry(facilitator, buyer):
    chain = facilitator.chain
    pair = np_payment(chain, buyer)
    facilitator.app.crashes_after_settle_left = 1

    crashed = httpx.post(f"{facilitator.url}/batches", json=batch_body("crash-1", pair))
    retried = httpx.post(f"{facilitator.url}/batches", json=batch_body("crash-1", pair))

    assert crashed.status_code == 500
    assert retried.status_code == 200
    assert retried.json()["success"] is True and retried.json()["results"][0]["success"]
    assert chain.balance_of(BASE, buyer.address) == chain.initial_balance - PRICE
    assert facilitator.app.batches_performed == 1


def test_np_payments_do_not_settle_one_by_one(facilitator, http, buyer):
    payment, requirements = np_payment(facilitator.chain, buyer)

    settled = http.settle(payment, requirements)

    assert (settled.success, settled.error_reason) == (False, "unsupported_scheme")
    assert facilitator.chain.balance_of(BASE, buyer.address) == facilitator.chain.initial_balance


def test_malformed_batches_are_refused_whole(facilitator, buyer):
    chain = facilitator.chain
    on_base = np_payment(chain, buyer)
    on_sepolia = np_payment(chain, Buyer(), network=BASE_SEPOLIA)
    url = f"{facilitator.url}/batches"

    mixed = httpx.post(url, json=batch_body("mixed-networks", on_base, on_sepolia))
    no_id = httpx.post(url, json={**batch_body("", on_base)})
    garbage = httpx.post(url, json={"batchId": "g", "x402Version": 2, "payments": [{"x": 1}]})

    assert [mixed.status_code, no_id.status_code, garbage.status_code] == [400, 400, 400]
    assert httpx.get(f"{url}/mixed-networks").status_code == 404
    assert chain.balance_of(BASE, buyer.address) == chain.initial_balance


# -- fault knobs ------------------------------------------------------------------------------


def test_failing_settles_settle_nothing_until_the_count_runs_out(facilitator, http, buyer):
    requirements = offer(facilitator.chain)
    payment = buyer.pay(requirements)
    facilitator.app.fail_next_settles(2, "transaction_failed")

    outcomes = [http.settle(payment, requirements) for _ in range(3)]

    assert [(o.success, o.error_reason) for o in outcomes] == [
        (False, "transaction_failed"),
        (False, "transaction_failed"),
        (True, None),
    ]
    assert facilitator.app.settles_performed == 1


def test_a_failing_batch_settles_nothing_and_can_be_retried(facilitator, buyer):
    pair = np_payment(facilitator.chain, buyer)
    facilitator.app.fail_next_settles(1, "transaction_failed")
    url = f"{facilitator.url}/batches"

    failed = httpx.post(url, json=batch_body("retry-me", pair)).json()
    retried = httpx.post(url, json=batch_body("retry-me", pair)).json()

    assert (failed["success"], failed["errorReason"]) == (False, "transaction_failed")
    assert retried["success"] is True
    assert facilitator.app.batches_performed == 1


def test_a_slow_settlement_settles_while_the_caller_gives_up(facilitator, buyer):
    requirements = offer(facilitator.chain)
    payment = buyer.pay(requirements)
    facilitator.app.settle_delay_seconds = 0.6
    impatient = HTTPFacilitatorClientSync(FacilitatorConfig(url=facilitator.url, timeout=0.2))

    with pytest.raises(httpx.TimeoutException):
        impatient.settle(payment, requirements)

    nonce = payment.payload["authorization"]["nonce"]
    assert facilitator.chain.authorization_state(BASE, buyer.address, nonce)
    assert facilitator.app.settles_performed == 1
    impatient.close()


def test_a_crash_after_settle_loses_the_answer_not_the_payment(facilitator, http, buyer):
    requirements = offer(facilitator.chain)
    payment = buyer.pay(requirements)
    facilitator.app.crashes_after_settle_left = 1

    with pytest.raises(ValueError, match=r"\(500\)"):
        http.settle(payment, requirements)

    assert facilitator.app.settles_performed == 1
    assert http.settle(payment, requirements).error_reason == (
        "invalid_exact_evm_nonce_already_used"
    )


def test_an_unavailable_verifier_answers_503(facilitator, http, buyer):
    requirements = offer(facilitator.chain)
    payment = buyer.pay(requirements)
    facilitator.app.verify_unavailable = True

    with pytest.raises(ValueError, match=r"\(503\)"):
        http.verify(payment, requirements)

    facilitator.app.verify_unavailable = False
    assert http.verify(payment, requirements).is_valid
    assert facilitator.app.requests["POST /verify"] == 2


def test_it_answers_json_errors(facilitator):
    url = facilitator.url

    assert httpx.get(f"{url}/nowhere").status_code == 404
    assert httpx.get(f"{url}/verify").status_code == 405
    assert httpx.post(f"{url}/verify", content=b"not json").status_code == 400
    assert httpx.post(f"{url}/settle", json={"x402Version": 2}).status_code == 400
    assert httpx.get(f"{url}/batches/unknown").json() == {"error": "no batch unknown"}


# -- standing alone ---------------------------------------------------------------------------


def test_the_package_imports_no_django_and_keeps_the_recursion_limit():
    probe = (
        "import sys; limit = sys.getrecursionlimit(); import sandbox.facilitator; "
        "print('django' in sys.modules, sys.getrecursionlimit() == limit)"
    )

    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )

    assert result.stdout.split() == ["False", "True"]


def test_it_runs_as_a_module(unused_tcp_port):
    process = subprocess.Popen(
        [sys.executable, "-m", "sandbox.facilitator", "--port", str(unused_tcp_port), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{unused_tcp_port}/supported")
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert answer.status_code == 200
    assert {kind["network"] for kind in answer.json()["kinds"]} >= {BASE, BASE_SEPOLIA}


@pytest.fixture
def unused_tcp_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
