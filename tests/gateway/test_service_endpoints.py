import json
import os
import subprocess
import sys

from cryptography.fernet import Fernet
from django.conf import settings
from django.db import OperationalError

from gateway import apis as gateway_apis
from gateway import cache as gateway_cache
from gateway.cache import RedisOutage, ResilientRedisCache


def test_healthz_reports_database_and_cache(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "cache": "ok"}


def test_healthz_keeps_the_host_in_service_while_only_redis_is_unreachable(client, db, monkeypatch):
    """The gateway serves without Redis (gateway.cache), so a load balancer reading the status
    code must not take every host out during a Redis outage."""
    monkeypatch.setattr(gateway_cache, "redis_outage", RedisOutage())
    unreachable = ResilientRedisCache("redis://127.0.0.1:1/0", {"KEY_PREFIX": "healthz"})
    monkeypatch.setattr(gateway_apis, "cache", unreachable)

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["database"] == "ok"
    assert response.json()["cache"].startswith("error")


def test_healthz_is_503_when_the_database_does_not_answer(client, db, monkeypatch):
    class Unreachable:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(gateway_apis, "connection", Unreachable())

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json() == {
        "status": "degraded",
        "database": "error: OperationalError",
        "cache": "ok",
    }


def test_the_openapi_description_documents_bearer_auth_and_errors(client, db):
    response = client.get("/v1/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    whoami = schema["paths"]["/v1/whoami"]["get"]
    assert {"bearerAuth": []} in whoami["security"]
    for status in ["200", "400", "401", "404", "429", "500"]:
        assert status in whoami["responses"], status
    error_schema = schema["components"]["schemas"]["ErrorEnvelope"]
    assert set(error_schema["properties"]) == {"success", "error", "code"}


def test_the_openapi_description_lists_routes_not_the_rails_catch_all(client, db):
    """A rail answers every catalog endpoint through one catch-all route, which has no one shape
    to document; each rail's own openapi.json lists its endpoints, and this one names those."""
    paths = client.get("/v1/openapi.json").json()["paths"]
    assert "/rails/x402/openapi.json" in paths
    assert "/rails/x402/credits/purchase" in paths
    assert [path for path in paths if "{slug}" in path] == []


def test_the_openapi_description_states_the_bounds_the_api_enforces(client, db):
    schema = client.get("/v1/openapi.json").json()
    paged = 0
    for path, operations in schema["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            if parameter["in"] == "query" and parameter["name"] in ("limit", "offset"):
                paged += 1
                bounds = parameter["schema"]
                assert "minimum" in bounds and "maximum" in bounds, (path, parameter["name"])
    assert paged >= 6  # list-endpoints, credits usage and transactions: limit and offset each
    check = _request_component(schema, "/v1/credits/check")
    assert check["properties"]["amountCents"]["type"] == "number"


def test_the_openapi_description_says_request_bodies_take_no_other_fields(client, db):
    schema = client.get("/v1/openapi.json").json()
    for path in ("/v1/run", "/v1/search", "/v1/details", "/v1/integrate", "/v1/credits/check"):
        body = _request_component(schema, path)
        assert body["additionalProperties"] is False, path
        assert body["properties"], path
    run = _request_component(schema, "/v1/run")
    assert set(run["properties"]) == {
        "api",
        "path",
        "body",
        "query",
        "pathParams",
        "parentRequestId",
        "method",
    }
    assert run["required"] == ["api", "path"]


def _request_component(schema, path):
    """The request body schema of POST ``path``, from the components it refers to."""
    content = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    name = content["schema"]["$ref"].rsplit("/", 1)[-1]
    return schema["components"]["schemas"][name]


def test_the_docs_page_serves_its_own_assets(client, db):
    response = client.get("/docs")
    assert response.status_code == 200
    page = response.content.decode()
    assert "swagger-ui" in page
    assert "cdn." not in page and "unpkg" not in page


def _started_settings(**variables) -> dict:
    """What a fresh process of the gateway starts with, given ``variables`` and none of DEBUG,
    SECRET_KEY, CATALOG_SECRET_KEY or DATA_DIR from this environment."""
    unset = ("DEBUG", "SECRET_KEY", "CATALOG_SECRET_KEY", "DATA_DIR")
    environment = {name: value for name, value in os.environ.items() if name not in unset}
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps([settings.DEBUG, settings.SECRET_KEY, settings.CATALOG_SECRET_KEY]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**environment, **variables, "DJANGO_SETTINGS_MODULE": "gateway.settings"},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    debug, secret_key, catalog_keys = json.loads(result.stdout.splitlines()[-1])
    return {"debug": debug, "secret_key": secret_key, "catalog_keys": catalog_keys}


def test_unset_secrets_are_generated_once_into_the_data_folder_and_reused(tmp_path):
    first = _started_settings(DATA_DIR=str(tmp_path))
    again = _started_settings(DATA_DIR=str(tmp_path))

    assert first["debug"] is False  # production mode unless DEBUG says otherwise
    assert len(first["secret_key"]) >= 50
    Fernet(first["catalog_keys"][0])
    assert again == first
    assert (tmp_path / "secret_key").read_text().strip() == first["secret_key"]
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0  # readable by its owner only
    assert (tmp_path / "catalog_secret_key").stat().st_mode & 0o077 == 0


def test_secrets_from_the_environment_win_and_nothing_is_written(tmp_path):
    catalog_key = Fernet.generate_key().decode()
    started = _started_settings(
        SECRET_KEY="x" * 50, CATALOG_SECRET_KEY=catalog_key, DATA_DIR=str(tmp_path)
    )
    assert (started["secret_key"], started["catalog_keys"]) == ("x" * 50, [catalog_key])
    assert list(tmp_path.iterdir()) == []


def test_production_starts_with_a_secret_key_and_a_catalog_secret_key():
    environment = {
        **os.environ,
        "DEBUG": "False",
        "SECRET_KEY": "x" * 50,
        "CATALOG_SECRET_KEY": Fernet.generate_key().decode(),
    }
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**environment, "DJANGO_SETTINGS_MODULE": "gateway.settings"},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
