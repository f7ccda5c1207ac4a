"""An unpaid request on a rail: 402 with the contract's offers and the protocols' own
challenges, built from settings alone, and nothing written."""

import json

import pytest
import responses
from x402.http.utils import decode_payment_required_header

from rails.models import RailPayment
from tests.rails.conftest import x402_path

pytestmark = pytest.mark.django_db


def rail(protocol: str, slug: str, path: str) -> str:
    return x402_path(slug, path).replace("/x402/", f"/{protocol}/", 1)


def test_unpaid_call_is_402_with_every_offer_and_nothing_written(leads, rail_client, settings):
    response = rail_client.get(rail("x402", "leads", "/v1/items"))

    assert response.status_code == 402
    assert response["Cache-Control"] == "no-store"
    body = response.json()
    assert body["success"] is False and body["code"] == "PAYMENT_REQUIRED"
    assert body["priceCents"] == 1
    methods = [offer["method"] for offer in body["offers"]]
    assert methods == ["mpp", "x402", "x402", "np"]
    for offer in body["offers"]:
        assert offer["intent"] == "charge" and offer["amount"] == "0.01"
        assert (
            offer["url"] == f"{getattr(settings, offer['method'].upper() + '_URL')}/leads/v1/items"
        )
    assert [o["rail"] for o in body["offers"] if o["method"] == "x402"] == settings.X402_NETWORKS
    np_offer = body["offers"][-1]
    assert np_offer["currency"] == "USDC" and np_offer["version"] == "x402-v2"
    assert np_offer["settlement"]
    assert body["offers"][0]["currency"] == "USDC.e"
    assert RailPayment.objects.count() == 0


def test_x402_challenge_serves_v2_header_and_v1_body(leads, rail_client, settings):
    response = rail_client.post(
        rail("x402", "leads", "/v1/people/enrich"), {"email": "a@b.co"}, format="json"
    )

    assert response.status_code == 402
    required = decode_payment_required_header(response["PAYMENT-REQUIRED"])
    assert required.x402_version == 2
    assert [r.network for r in required.accepts] == settings.X402_NETWORKS
    assert {r.amount for r in required.accepts} == {"50000"}
    assert {r.pay_to for r in required.accepts} == {settings.RAIL_PAY_TO}
    assert required.resource.url.endswith("/rails/x402/leads/v1/people/enrich")
    body = response.json()
    assert body["x402Version"] == 1
    assert [a["network"] for a in body["accepts"]] == ["base", "polygon"]
    assert {a["maxAmountRequired"] for a in body["accepts"]} == {"50000"}


def test_np_challenge_is_x402_v2_with_the_batched_marker(leads, rail_client, settings):
    response = rail_client.get(rail("np", "leads", "/v1/items"))

    required = decode_payment_required_header(response["PAYMENT-REQUIRED"])
    assert [r.network for r in required.accepts] == [settings.NP_NETWORK]
    assert required.accepts[0].extra == {"name": "GatewayWalletBatched", "version": "1"}
    assert "accepts" not in response.json()


@responses.activate
def test_free_endpoint_is_served_without_payment(leads, rail_client):
    responses.get("https://api.leads.test/v1/jobs/7", json={"status": "done"})

    response = rail_client.get(rail("x402", "leads", "/v1/jobs/7"))

    assert response.status_code == 200
    assert json.loads(response.content) == {"status": "done"}
    assert RailPayment.objects.count() == 0


def test_unknown_slug_and_path_are_404_in_json(leads, rail_client):
    for path in (rail("x402", "nope", "/v1/items"), rail("x402", "leads", "/v9/none")):
        response = rail_client.get(path)
        assert response.status_code == 404
        assert response.json()["success"] is False


def test_endpoint_not_payable_is_404(leads, rail_client):
    leads.items_get.is_payable = False
    leads.items_get.save()

    response = rail_client.get(rail("x402", "leads", "/v1/items"))

    assert response.status_code == 404
    assert "not payable" in response.json()["error"]


def test_rails_off_without_a_recipient(leads, rail_client, settings):
    settings.RAILS_ENABLED = False

    response = rail_client.get(rail("x402", "leads", "/v1/items"))

    assert response.status_code == 404
    assert "RAIL_PAY_TO" in response.json()["error"]


def test_requests_without_a_key_are_limited_per_client_address(leads, rail_client, settings):
    settings.RAIL_RATE_LIMIT_PER_MINUTE = 3
    statuses = [rail_client.get(rail("x402", "leads", "/v1/items")).status_code for _ in range(4)]

    assert statuses == [402, 402, 402, 429]


def test_rail_openapi_document(leads, rail_client):
    response = rail_client.get(rail("x402", "", "").rstrip("/") + "/openapi.json")

    assert response.status_code == 200
    document = response.json()
    assert document["openapi"] == "3.1.0" and document["info"]["version"] == "1.0.0"
    chat = document["paths"]["/leads/api/paas/v4/chat/completions"]["post"]
    assert chat["operationId"] == "leads_POST__api_paas_v4_chat_completions"
    assert set(chat["responses"]) == {"200", "402"}
    assert "/leads/v1/jobs/{id}" in document["paths"]


def test_a_body_that_is_not_json_or_too_large_is_refused(leads, rail_client, settings):
    path = rail("x402", "leads", "/v1/people/enrich")

    broken = rail_client.post(path, "{not json", content_type="application/json")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    large = rail_client.post(path, {"email": "a" * 200}, format="json")

    assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]
    assert large.status_code == 413


def test_the_payment_sdks_leave_the_recursion_limit_alone():
    """py_ecc, under the x402 SDK, raises the limit to 100,000 on import; the rails put it back,
    so that a deeply nested body is a RecursionError (a 400), not a crashed process."""
    import sys

    import eth_account  # noqa: F401

    import rails.x402  # noqa: F401

    assert sys.getrecursionlimit() < 10_000
