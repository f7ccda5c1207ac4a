"""The rails share /v1/run's rule for broken answers: a provider's 2xx that is not what its
endpoint documents is a 502, and the payment is released, never settled."""

import pytest

from rails.models import RailPayment
from tests.http_double import Reply
from tests.rails.conftest import facilitator, provider, rail_client, x402_path
from tests.rails.payers import Payer

__all__ = ["facilitator", "provider", "rail_client"]

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = x402_path("leads", "/v1/items")


@pytest.mark.parametrize(
    "broken",
    [
        Reply(200, b'{"items": [1, 2', headers={"Content-Type": "application/json"}),
        Reply(200, b"", headers={"Content-Type": "application/json"}),
    ],
    ids=["truncated JSON", "empty body"],
)
def test_a_broken_answer_releases_the_payment_and_can_be_paid_again(
    leads, provider, facilitator, rail_client, broken
):
    provider.routes["/v1/items"] = broken
    payer = Payer()
    challenge = rail_client.get(ITEMS)
    headers = payer.pay(challenge, f"http://testserver{ITEMS}")

    failed = rail_client.get(ITEMS, headers=headers)

    assert failed.status_code == 502
    assert failed.json()["code"] == "UPSTREAM_ERROR"
    assert failed.json()["upstreamStatus"] == 200
    assert RailPayment.objects.get().status == RailPayment.Status.RELEASED
    assert facilitator.app.settles_performed == 0

    provider.routes["/v1/items"] = Reply(200, {"items": []})
    retried = rail_client.get(ITEMS, headers=headers)

    assert retried.status_code == 200
    assert facilitator.app.settles_performed == 1
