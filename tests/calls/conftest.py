from dataclasses import dataclass

import pytest
from django.conf import settings

from catalog.models import Endpoint, ProviderApi
from catalog.services import provider_api_secret_set
from gateway.models import Organization
from tests.factories import make_endpoint, make_provider_api

PROVIDER_URL = "https://api.leads.test"


@dataclass
class LeadsCatalog:
    api: ProviderApi
    owner: Organization
    search: Endpoint
    enrich: Endpoint
    job_start: Endpoint
    job_poll: Endpoint
    chat: Endpoint
    items_get: Endpoint
    items_delete: Endpoint

    @property
    def sandbox_url(self) -> str:
        return self.api.sandbox_base_url


def param(name, required=False, type_="string"):
    return {"name": name, "type": type_, "required": required, "description": name}


@pytest.fixture
def leads(db) -> LeadsCatalog:
    """A provider of the kinds of endpoints /v1/run must handle, at a non-resolvable address."""
    owner = Organization.objects.create(name="Leads Inc", slug="leads-inc")
    api = make_provider_api(
        "leads",
        base_url=PROVIDER_URL,
        sandbox_base_url=f"{settings.SANDBOX_BASE_URL}/leads",
        owner=owner,
        upstream_auth_type=ProviderApi.AuthType.HEADER,
        upstream_auth_name="X-Api-Key",
    )
    provider_api_secret_set(api=api, secret="provider-secret")
    job_poll = make_endpoint(
        api,
        "/v1/jobs/{id}",
        "GET",
        price_kind="free",
        price_micros=0,
        path_params=[param("id", True)],
    )
    return LeadsCatalog(
        api=api,
        owner=owner,
        search=make_endpoint(
            api,
            "/v2/domain-search",
            "GET",
            price_kind="per_result",
            price_micros=2_500,
            result_count_path="data.emails",
            result_bound_param="limit",
            result_max=100,
            pagination_params=["offset"],
            query_params=[
                param("domain", True),
                param("limit", type_="integer"),
                param("offset", type_="integer"),
            ],
        ),
        enrich=make_endpoint(
            api,
            "/v1/people/enrich",
            "POST",
            price_micros=50_000,
            body_type="object",
            body_params=[param("email", True), param("company")],
        ),
        job_start=make_endpoint(
            api,
            "/v1/jobs",
            "POST",
            price_micros=100_000,
            poll_endpoint=job_poll,
            body_params=[param("domains", True)],
        ),
        job_poll=job_poll,
        chat=make_endpoint(
            api,
            "/api/paas/v4/chat/completions",
            "POST",
            price_kind="dynamic",
            price_micros=0,
            input_micros_per_mtok=600_000,
            output_micros_per_mtok=2_200_000,
            default_max_tokens=1024,
            body_params=[param("model", True), param("messages", True)],
        ),
        items_get=make_endpoint(api, "/v1/items", "GET", price_micros=10_000),
        items_delete=make_endpoint(api, "/v1/items", "DELETE", price_micros=10_000),
    )


@pytest.fixture
def run(client_for):
    """run(secret, **payload) -> the response of POST /v1/run."""

    def post(secret, headers=None, **payload):
        return client_for(secret).post("/v1/run", payload, format="json", headers=headers or {})

    return post
