"""The live gateway keeps the promises of its own OpenAPI description: schemathesis generates
requests for every /v1 operation of GET /v1/openapi.json, valid and invalid ones, sends them to
the live server with a funded test key, and checks every answer: no server error, only
documented statuses, the documented content type, bodies that match their schemas.

schemathesis's lazy loader (``schemathesis.pytest.from_fixture``) does not run under pytest 9,
so the description is read when the module is collected, from the gateway's own view, and a
test checks that the live server serves the same document."""

import pytest
import requests
import schemathesis
from django.test import Client
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.factories import fund

pytestmark = pytest.mark.django_db(transaction=True)

# Fuzzed requests per operation, beyond the examples and the coverage phase's boundary and
# invalid values for every field: enough to keep the whole run near a minute.
EXAMPLES_PER_OPERATION = 25
FUNDS_MICROS = 5_000_000

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]

# Collection runs before the test environment allows the test client's own host name.
DOCUMENT = Client().get("/v1/openapi.json", HTTP_HOST="localhost").json()

schema = schemathesis.openapi.from_dict(
    DOCUMENT,
    config=SchemathesisConfig.from_dict(
        {
            "generation": {
                "max-examples": EXAMPLES_PER_OPERATION,
                "deterministic": True,
                "database": "none",
            }
        }
    ),
).exclude(path_regex=r"^/rails/")


@pytest.fixture
def test_key(gateway, alice, settings) -> str:
    # The run sends hundreds of requests with one key within a minute.
    settings.RATE_LIMIT_PER_MINUTE = 1_000_000
    fund(alice.user, FUNDS_MICROS)
    return alice.test_key


def test_the_live_gateway_serves_the_description_under_test(gateway):
    assert requests.get(f"{gateway}/v1/openapi.json", timeout=30).json() == DOCUMENT


@schema.parametrize()
# The live server and the key serve every generated request of an operation, as intended.
@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_answer_is_one_the_description_documents(case, gateway, test_key):
    case.call_and_validate(
        base_url=gateway,
        headers={"Authorization": f"Bearer {test_key}"},
        checks=CHECKS,
        timeout=60,
    )
