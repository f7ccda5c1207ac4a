"""The TypeScript SDK (sdk/typescript) against a live gateway: its own node tests, the tarball the
gateway serves installed with npm, and the /v1/integrate snippets run exactly as they are given."""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from django.conf import settings

from credits.models import UsageEvent
from tests.factories import make_persona

pytestmark = pytest.mark.django_db(transaction=True)

SDK_DIRECTORY = Path(settings.BASE_DIR) / "sdk" / "typescript"
SDK_VERSION = json.loads((SDK_DIRECTORY / "package.json").read_text())["version"]
# Endpoints whose snippets are run (a per-result GET and a POST with a JSON body), each with a
# field of the provider's answer that shows the call reached it.
SNIPPET_ENDPOINTS = [
    ("hunter", "/v2/domain-search", "emails"),
    ("firecrawl", "/v1/scrape", "metadata"),
]


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not on PATH: the TypeScript SDK's tests need Node.js 18+ and npm")
    return path


@pytest.fixture
def gateway(gateway, settings):
    """The live gateway where live keys are charged and answered by the sandbox, as in the demo."""
    settings.LIVE_CALLS_USE_SANDBOX = True
    return gateway


@pytest.fixture
def npm_environment(tmp_path) -> dict[str, str]:
    """npm with its own cache and no registry it could reach: a tarball URL without
    dependencies must install from the gateway alone."""
    return {
        **os.environ,
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
        "npm_config_update_notifier": "false",
    }


def integrate(gateway: str, key: str, api: str, path: str, format: str) -> dict:
    response = requests.post(
        f"{gateway}/v1/integrate",
        json={"api": api, "path": path, "format": format},
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return response.json()


def without_gateway_variables(environment: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in environment.items() if not k.startswith("GATEWAY_")}


def test_the_sdk_passes_its_node_tests_against_the_live_gateway(gateway, newcomer):
    unfunded = make_persona("sdk-unfunded@example.com")
    result = subprocess.run(
        [tool("node"), "--test", "--test-reporter=tap"],
        cwd=SDK_DIRECTORY,
        env={
            **without_gateway_variables(os.environ),
            "GATEWAY_BASE_URL": gateway,
            "GATEWAY_API_KEY": newcomer.live_key,
            "GW_SDK_TEST_UNFUNDED_KEY": unfunded.live_key,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )

    report = result.stdout
    assert result.returncode == 0, report[-8000:] + result.stderr[-2000:]
    counts = dict(re.findall(r"^# (tests|pass|fail|skipped|todo|cancelled) (\d+)$", report, re.M))
    assert int(counts["tests"]) >= 20, report[-2000:]
    assert counts["pass"] == counts["tests"], report[-2000:]


def test_npm_installs_the_sdk_from_the_tarball_the_gateway_serves(
    gateway, tmp_path, npm_environment
):
    url = f"{gateway}/downloads/gw-sdk-{SDK_VERSION}.tgz"
    project = tmp_path / "project"
    project.mkdir()

    result = subprocess.run(
        [tool("npm"), "install", url],
        cwd=project,
        env=npm_environment,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    installed = project / "node_modules" / "gw-sdk"
    assert json.loads((installed / "package.json").read_text())["version"] == SDK_VERSION
    assert sorted(p.name for p in installed.iterdir()) == [
        "README.md",
        "index.d.ts",
        "index.js",
        "package.json",
    ]
    imported = subprocess.run(
        [
            tool("node"),
            "--input-type=module",
            "-e",
            'import { Gateway, GatewayError } from "gw-sdk";'
            "console.log(typeof Gateway, typeof GatewayError);",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert imported.stdout.strip() == "function function", imported.stderr


@pytest.mark.parametrize(("api", "path", "field"), SNIPPET_ENDPOINTS)
def test_the_gw_sdk_snippet_runs_as_its_setup_says(
    gateway, newcomer, tmp_path, npm_environment, api, path, field
):
    answer = integrate(gateway, newcomer.live_key, api, path, "gw-sdk")
    setup, snippet = answer["setup"]["sdk"], answer["snippets"]["gw-sdk"]
    (tmp_path / "call.mjs").write_text(snippet)
    tool("node")
    tool("npm")

    # What a person does: the set-up lines in order, with their own key in place of the example.
    script = setup.replace("gw_live_...", newcomer.live_key)
    result = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path,
        env=without_gateway_variables(npm_environment),
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    # npm's lines, then what the snippet prints: the provider's answer as JSON.
    data, _ = json.JSONDecoder().raw_decode(result.stdout[result.stdout.index("\n{") + 1 :])
    assert field in data["data"], data
    event = UsageEvent.objects.get(api_slug=api, path=path)
    assert (event.status, event.api_key.user) == ("completed", newcomer.user)


@pytest.mark.parametrize(("api", "path", "field"), SNIPPET_ENDPOINTS)
def test_the_run_api_snippet_runs_as_given(gateway, newcomer, api, path, field):
    snippet = integrate(gateway, newcomer.live_key, api, path, "run-api")["snippets"]["run-api"]

    result = subprocess.run(
        [sys.executable, "-c", snippet],
        env={**without_gateway_variables(os.environ), "GATEWAY_API_KEY": newcomer.live_key},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    status, answer = result.stdout.split("\n", 1)
    assert status == "200", answer
    answer = ast.literal_eval(answer.strip())
    assert answer["success"] is True
    assert answer["billing"]["charged"] is True
    assert field in answer["data"]["data"], answer
    assert UsageEvent.objects.get(request_id=answer["requestId"]).status == "completed"
