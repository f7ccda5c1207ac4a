"""An endpoint page states the rules that span its parameters."""

import pytest
from django.urls import reverse

from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db


def test_an_endpoint_page_lists_its_rules_in_words(client):
    api = make_provider_api("finder", name="Finder")
    make_endpoint(
        api,
        "/v2/email-finder",
        query_params=[
            {"name": "domain", "type": "string", "required": False, "description": ""},
            {"name": "company", "type": "string", "required": False, "description": ""},
        ],
        requirements=[{"anyOf": [["domain"], ["company"]]}],
    )
    url = reverse("dashboard:catalog-endpoint", args=["finder", "GET", "/v2/email-finder"])

    html = client.get(url).content.decode()

    assert "Inputs that go together" in html
    assert "<li>Send domain or company.</li>" in html
    # the example call sends one of them
    assert "example.com" in html


def test_an_endpoint_without_rules_shows_none(client):
    api = make_provider_api("plain", name="Plain")
    make_endpoint(api, "/v1/ping")
    url = reverse("dashboard:catalog-endpoint", args=["plain", "GET", "/v1/ping"])

    assert "Inputs that go together" not in client.get(url).content.decode()
