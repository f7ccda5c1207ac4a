"""Strict-Transport-Security over TLS and the Content-Security-Policy of every page (the browser
test, tests/browser/test_content_security_policy.py, checks that the pages work under it)."""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings

YEAR = 365 * 24 * 3600
PAGES = ["/", "/login", "/signup", "/catalog", "/docs", "/admin/login/"]


def parsed_policy(header: str) -> dict[str, set[str]]:
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: set(sources) for name, *sources in directives}


def test_a_secure_request_is_told_to_keep_to_https(client, db, settings):
    settings.SECURE_HSTS_SECONDS = YEAR

    secure = client.get("/", secure=True)
    plain = client.get("/")

    assert secure["Strict-Transport-Security"] == f"max-age={YEAR}"
    assert "Strict-Transport-Security" not in plain


def test_behind_a_tls_proxy_a_forwarded_https_request_is_secure(client, db, settings):
    settings.SECURE_HSTS_SECONDS = YEAR
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    forwarded = client.get("/", HTTP_X_FORWARDED_PROTO="https")
    plain = client.get("/", HTTP_X_FORWARDED_PROTO="http")

    assert forwarded["Strict-Transport-Security"] == f"max-age={YEAR}"
    assert "Strict-Transport-Security" not in plain


def test_subdomains_and_preload_are_added_when_configured(client, db, settings):
    settings.SECURE_HSTS_SECONDS = YEAR
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    settings.SECURE_HSTS_PRELOAD = True

    header = client.get("/login", secure=True)["Strict-Transport-Security"]

    assert header == f"max-age={YEAR}; includeSubDomains; preload"


def _hsts_seconds_at_start(**variables) -> int:
    """SECURE_HSTS_SECONDS as a fresh process of the gateway starts with ``variables``."""
    unset = ("GATEWAY_BASE_URL", "BEHIND_TLS_PROXY", "SECURE_HSTS_SECONDS")
    environment = {name: value for name, value in os.environ.items() if name not in unset}
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.SECURE_HSTS_SECONDS))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**environment, **variables, "DJANGO_SETTINGS_MODULE": "gateway.settings"},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    ("variables", "seconds"),
    [
        ({}, 0),
        ({"GATEWAY_BASE_URL": "https://gateway.example.com"}, YEAR),
        ({"GATEWAY_BASE_URL": "http://gateway.internal", "BEHIND_TLS_PROXY": "True"}, YEAR),
        ({"GATEWAY_BASE_URL": "https://gateway.example.com", "SECURE_HSTS_SECONDS": "3600"}, 3600),
    ],
)
def test_hsts_is_on_by_default_only_when_the_gateway_is_served_over_tls(variables, seconds):
    assert _hsts_seconds_at_start(**variables) == seconds


def test_every_page_carries_the_strict_policy(client, db):
    for path in PAGES:
        response = client.get(path)
        assert response.status_code == 200, path
        assert parsed_policy(response["Content-Security-Policy"]) == {
            "default-src": {"'self'"},
            "img-src": {"'self'", "data:"},
            "object-src": {"'none'"},
            "base-uri": {"'self'"},
            "frame-ancestors": {"'none'"},
            "form-action": {"'self'", "https://checkout.stripe.com"},
        }, path


def test_the_api_docs_load_their_set_up_script_from_the_gateway_not_inline(client, db):
    page = client.get("/docs").content.decode()
    script = client.get("/docs?script=")

    assert '<script src="/docs?script="></script>' in page
    assert "<script>" not in page and "<style>" not in page
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.content.decode()
