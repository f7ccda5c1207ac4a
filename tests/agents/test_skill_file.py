"""GET /skill.md: a SKILL.md with the gateway's real addresses, linked from the dashboard, whose
every command runs against the live gateway and succeeds."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
import yaml
from django.test import Client

from credits.models import UsageEvent

SHELL_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    header, _, _ = text[4:].partition("\n---\n")
    return yaml.safe_load(header)


@pytest.mark.django_db
def test_the_skill_file_is_public_markdown_with_its_front_matter(settings):
    settings.GATEWAY_BASE_URL = "https://gateway.example.com"
    settings.MCP_URL = "https://gateway.example.com/mcp"

    response = Client().get("/skill.md")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    text = response.content.decode()
    meta = front_matter(text)
    assert meta["name"] == "api-gateway"
    assert meta["version"] == "1.0"
    assert "https://gateway.example.com" in meta["description"]
    assert "export GATEWAY_BASE_URL=https://gateway.example.com\n" in text
    assert "at `https://gateway.example.com/mcp`" in text
    assert "{{" not in text and "{%" not in text
    assert "&#x27;" not in text and "&quot;" not in text  # markdown, not HTML-escaped
    for lesson in ("/v1/search", "/v1/details", "/v1/run", "parentRequestId", "pollEndpoint"):
        assert lesson in text
    for lesson in ("INSUFFICIENT_CREDITS", "/v1/credits/balance", "gw run", "gw search"):
        assert lesson in text


@pytest.mark.django_db
def test_the_keys_page_links_the_skill_file(alice):
    browser = Client()
    browser.force_login(alice.user)

    page = browser.get("/keys").content.decode()

    assert 'href="/skill.md" download="SKILL.md"' in page


@pytest.mark.django_db(transaction=True)
def test_every_command_of_the_skill_file_succeeds_on_the_live_gateway(gateway, newcomer, settings):
    assert shutil.which("jq"), "the skill file's commands use jq: apt-get install jq"
    settings.LIVE_CALLS_USE_SANDBOX = True
    settings.MCP_URL = f"{gateway}/mcp"
    text = requests.get(f"{gateway}/skill.md", timeout=10).text
    blocks = SHELL_BLOCK.findall(text)
    assert len(blocks) == text.count("```sh") == 8
    script = "set -euo pipefail\n" + "\n".join(blocks)
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("GATEWAY_", "FORCE_COLOR"))
    }
    environment["GATEWAY_API_KEY"] = newcomer.live_key
    # gw as installed beside this Python.
    environment["PATH"] = f"{Path(sys.executable).parent}:{environment['PATH']}"

    result = subprocess.run(
        ["bash", "-c", script], env=environment, capture_output=True, text=True, timeout=300
    )

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f'"owner":{{"type":"user","name":"{newcomer.user.email}"}}' in result.stdout
    assert '"charged":false' in result.stdout  # the continuation page, by curl and by gw
    assert re.search(r"attempt \d: completed", result.stdout)
    assert '"sufficient":true' in result.stdout
    # Charged: four first pages (two by curl, two by gw) and the job's start; free: the two
    # next pages and the polls.
    assert UsageEvent.objects.filter(cost_micros__gt=0).count() == 5
    assert not UsageEvent.objects.exclude(status="completed").exists()
