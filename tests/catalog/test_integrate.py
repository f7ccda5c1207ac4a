import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from catalog.apis import EndpointIntegrateOutputSerializer
from catalog.snippets import FORMATS
from tests.catalog.conftest import assert_matches_documented_shape, import_documents
from tests.factories import make_endpoint, make_provider_api

pytestmark = pytest.mark.django_db

ALLOWED = "gw-sdk, run-api, curl, x402-fetch, x402-python, all"


def integrate(client, **body):
    return client.post("/v1/integrate", body, format="json")


def snippets_for(client, **body) -> dict:
    response = integrate(client, **body)
    assert response.status_code == 200, response.content
    payload = response.json()
    assert_matches_documented_shape(EndpointIntegrateOutputSerializer, payload)
    return payload


def curl_arguments(snippet: str) -> list[str]:
    """The words bash would pass to curl (line continuations joined)."""
    return shlex.split(snippet.replace("\\\n", " "))


def curl_body(snippet: str) -> dict:
    words = curl_arguments(snippet)
    return json.loads(words[words.index("-d") + 1])


def test_the_default_format_is_the_sdk(client_for, alice, hunter):
    payload = snippets_for(client_for(alice.live_key), api="hunter", path="/email-verifier")
    assert payload["format"] == "gw-sdk"
    assert list(payload["snippets"]) == ["gw-sdk"]
    assert payload["api"] == {"name": "Hunter", "slug": "hunter"}
    assert payload["endpoint"] == {
        "path": "/email-verifier",
        "method": "GET",
        "price": "$0.01",
        "priceUnit": "call",
    }
    assert "npm install" in payload["setup"]["sdk"]
    assert "GATEWAY_API_KEY" in payload["setup"]["sdk"]
    assert "x402" in payload["setup"]["x402"]


def test_the_sdk_setup_installs_the_package_this_gateway_serves(
    client, client_for, alice, hunter, settings
):
    settings.GATEWAY_BASE_URL = "https://gw.example"
    payload = snippets_for(client_for(alice.live_key), api="hunter", path="/email-verifier")
    install, key, base_url, run = payload["setup"]["sdk"].splitlines()
    tarball_url = install.split()[2]
    assert re.fullmatch(r"https://gw\.example/downloads/gw-sdk-\d+\.\d+\.\d+\.tgz", tarball_url)
    assert "not on the npm registry" in install
    assert key.startswith("export GATEWAY_API_KEY=gw_live_...")
    assert base_url == "export GATEWAY_BASE_URL=https://gw.example"
    # The snippet awaits at its top level, which node allows in an ES module (.mjs).
    assert run.startswith("node call.mjs  # the snippet saved as call.mjs")
    assert 'from "gw-sdk"' in payload["snippets"]["gw-sdk"]
    assert client.get(tarball_url.removeprefix("https://gw.example")).status_code == 200


@pytest.mark.parametrize("format", FORMATS)
def test_each_format_gives_exactly_its_snippet(client_for, alice, hunter, format):
    payload = snippets_for(
        client_for(alice.live_key), api="hunter", path="/email-verifier", format=format
    )
    assert payload["format"] == format
    assert list(payload["snippets"]) == [format]


def test_all_gives_every_format(client_for, alice, hunter):
    payload = snippets_for(
        client_for(alice.live_key), api="hunter", path="/email-verifier", format="all"
    )
    assert list(payload["snippets"]) == list(FORMATS)


def test_an_unknown_format_is_a_400_listing_the_allowed_ones(client_for, alice, hunter):
    response = integrate(
        client_for(alice.live_key), api="hunter", path="/email-verifier", format="cobol"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "INVALID_REQUEST"
    assert response.json()["error"] == f"format: must be one of: {ALLOWED}"


@pytest.mark.parametrize(
    ("document", "path", "price"),
    [
        ("hunter-oas30.yaml", "/email-verifier", "$0.01"),
        ("hunter-oas30.yaml", "/leads", "$0.00"),
        ("hunter-oas30.yaml", "/domain-search", "$0.0025"),
        ("llm-oas31.yaml", "/chat/completions", "dynamic"),
    ],
)
def test_every_price_kind_is_shown_and_every_snippet_is_valid(
    client_for, alice, document, path, price
):
    import_documents(document)
    slug = "hunter" if document.startswith("hunter") else "chat-models-inc"
    payload = snippets_for(client_for(alice.live_key), api=slug, path=path, format="all")
    assert payload["endpoint"]["price"] == price
    snippets = payload["snippets"]
    compile(snippets["run-api"], "run-api", "exec")
    compile(snippets["x402-python"], "x402-python", "exec")
    request = curl_body(snippets["curl"])
    assert request["api"] == slug and request["path"] == path
    sdk_request = re.search(r"gateway\.run\((\{.*?\n\})\);", snippets["gw-sdk"], re.S).group(1)
    assert json.loads(sdk_request) == request


def test_snippets_fill_required_parameters_with_examples_from_the_document(
    client_for, alice, hunter
):
    snippets = snippets_for(
        client_for(alice.live_key), api="hunter", path="/domain-search", format="all"
    )["snippets"]
    # domain has an example (stripe.com); the optional limit and offset are left out
    assert curl_body(snippets["curl"])["query"] == {"domain": "stripe.com"}
    assert "params={" in snippets["x402-python"]
    assert '"domain": "stripe.com"' in snippets["x402-python"]
    assert "/hunter/domain-search?domain=stripe.com" in snippets["x402-fetch"]


def test_a_body_endpoint_sends_its_required_body_fields(client_for, alice, hunter):
    snippets = snippets_for(
        client_for(alice.live_key), api="hunter", path="/bulk-enrichments", format="all"
    )["snippets"]
    assert curl_body(snippets["curl"])["body"] == {"emails": ["jane@example.com"]}
    body = re.search(r"JSON\.stringify\((\{.*?\})\)", snippets["x402-fetch"], re.S).group(1)
    assert json.loads(body) == {"emails": ["jane@example.com"]}
    assert 'method: "POST"' in snippets["x402-fetch"]


def test_gateway_snippets_read_the_key_from_the_environment_and_target_the_gateway(
    client_for, alice, hunter, settings
):
    settings.GATEWAY_BASE_URL = "https://gw.example"
    snippets = snippets_for(
        client_for(alice.live_key), api="hunter", path="/email-verifier", format="all"
    )["snippets"]
    for name in ("gw-sdk", "run-api", "curl"):
        assert "GATEWAY_API_KEY" in snippets[name], name
        assert "https://gw.example" in snippets[name], name
        assert alice.live_key not in snippets[name]
    words = curl_arguments(snippets["curl"])
    assert words[:4] == ["curl", "-sS", "-X", "POST"]
    assert words[4] == "${GATEWAY_BASE_URL:-https://gw.example}/v1/run"
    assert "Authorization: Bearer $GATEWAY_API_KEY" in words
    assert "Content-Type: application/json" in words


def test_payment_snippets_call_the_x402_rail_with_a_wallet_key(client_for, alice, hunter, settings):
    settings.X402_URL = "https://pay.example/x402"
    snippets = snippets_for(
        client_for(alice.live_key), api="hunter", path="/email-verifier", format="all"
    )["snippets"]
    # The current SDKs: x402 v2's fetch wrapper (not the v1 x402-fetch package) and the Python
    # package's client with its requests integration. tests/rails runs both against a gateway.
    assert 'from "@x402/fetch"' in snippets["x402-fetch"]
    assert "new ExactEvmScheme(account)" in snippets["x402-fetch"]
    assert "from x402.http.clients import x402_requests" in snippets["x402-python"]
    assert "x402_requests(client)" in snippets["x402-python"]
    assert '"https://pay.example/x402/hunter/email-verifier"' in snippets["x402-python"]
    for name in ("x402-fetch", "x402-python"):
        assert "PRIVATE_KEY" in snippets[name]
        assert "GATEWAY_API_KEY" not in snippets[name]


def test_an_endpoint_off_the_rails_gets_no_payment_snippets(client_for, alice, hunter, settings):
    client = client_for(alice.live_key)
    settings.RAILS_ENABLED = False

    everything = snippets_for(client, api="hunter", path="/email-verifier", format="all")
    refused = client.post(
        "/v1/integrate",
        {"api": "hunter", "path": "/email-verifier", "format": "x402-python"},
        format="json",
    )

    assert set(everything["snippets"]) == {"gw-sdk", "run-api", "curl"}
    assert refused.status_code == 400
    assert "not payable on the pay-per-call rails" in refused.json()["error"]


def test_a_path_that_a_url_cannot_carry_is_escaped_on_the_rail_but_not_in_run(client_for, alice):
    api = make_provider_api("aws-acm")
    make_endpoint(api, "/#DescribeCertificate", "POST", body_type="object")
    snippets = snippets_for(
        client_for(alice.live_key), api="aws-acm", path="/#DescribeCertificate", format="all"
    )["snippets"]
    assert curl_body(snippets["curl"])["path"] == "/#DescribeCertificate"
    assert "/aws-acm/%23DescribeCertificate" in snippets["x402-python"]


def test_array_and_boolean_path_parameters_get_values_a_path_carries(client_for, alice):
    api = make_provider_api("objects")
    make_endpoint(
        api,
        "/{Bucket}/{Key}?uploads",
        "POST",
        path_params=[
            {"name": "Bucket", "type": "string", "required": True, "description": ""},
            {"name": "Key", "type": "array", "items": "string", "required": True},
        ],
    )
    make_endpoint(
        api,
        "/flags/{on}/{ids}",
        path_params=[
            {"name": "on", "type": "boolean", "required": True, "description": ""},
            {"name": "ids", "type": "array", "required": True, "example": [3, 4]},
        ],
    )
    client = client_for(alice.live_key)
    upload = snippets_for(client, api="objects", path="/{Bucket}/{Key}?uploads", format="curl")
    assert curl_body(upload["snippets"]["curl"])["path"] == "/example/123?uploads"
    flags = snippets_for(client, api="objects", path="/flags/{on}/{ids}", format="curl")
    assert curl_body(flags["snippets"]["curl"])["path"] == "/flags/true/3,4"


def test_the_run_call_names_the_method_only_where_the_path_has_several(client_for, alice, hunter):
    client = client_for(alice.live_key)
    for path, method, named in [
        ("/email-verifier", None, False),
        ("/leads/{id}", "GET", True),
        ("/leads/{id}", "PUT", True),
    ]:
        extra = {"method": method} if method else {}
        snippet = snippets_for(client, api="hunter", path=path, format="curl", **extra)
        run_call = curl_body(snippet["snippets"]["curl"])
        assert run_call.get("method") == (method if named else None)


def test_quotes_in_example_values_survive_the_shell(client_for, alice):
    api = make_provider_api("quoted")
    make_endpoint(
        api,
        "/v1/say",
        query_params=[
            {
                "name": "text",
                "type": "string",
                "required": True,
                "description": "",
                "example": 'it\'s "quoted" $HOME `x`',
            }
        ],
    )
    snippets = snippets_for(client_for(alice.live_key), api="quoted", path="/v1/say", format="all")[
        "snippets"
    ]
    assert curl_body(snippets["curl"])["query"] == {"text": 'it\'s "quoted" $HOME `x`'}
    compile(snippets["run-api"], "run-api", "exec")
    compile(snippets["x402-python"], "x402-python", "exec")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_snippets_parse_as_modules(client_for, alice, hunter, tmp_path):
    snippets = snippets_for(
        client_for(alice.live_key), api="hunter", path="/bulk-enrichments", format="all"
    )["snippets"]
    for name in ("gw-sdk", "x402-fetch"):
        module = tmp_path / f"{name}.mjs"
        module.write_text(snippets[name])
        result = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


def test_integrate_needs_a_key_and_names_unknown_apis(client_for, charlie, hunter):
    assert integrate(client_for(None), api="hunter", path="/leads").status_code == 401
    response = integrate(client_for(charlie.live_key), api="nope", path="/leads")
    assert response.status_code == 404
    assert "nope" in response.json()["error"]


# --- The curl and run-api snippets, run for real against a stand-in for /v1/run ----------------


class _Recorder(BaseHTTPRequestHandler):
    requests: list

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.requests.append(
            {
                "path": self.path,
                "authorization": self.headers.get("Authorization"),
                "content_type": self.headers.get("Content-Type"),
                "body": json.loads(self.rfile.read(length)),
            }
        )
        payload = json.dumps({"success": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def run_stand_in():
    _Recorder.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.requests
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("format", ["curl", "run-api"])
def test_the_curl_and_run_api_snippets_post_the_run_call_with_the_bearer_key(
    client_for, alice, hunter, run_stand_in, format
):
    if format == "curl" and shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    base_url, received = run_stand_in
    snippet = snippets_for(
        client_for(alice.live_key), api="hunter", path="/leads/7", method="PUT", format=format
    )["snippets"][format]
    command = ["bash", "-c", snippet] if format == "curl" else [sys.executable, "-c", snippet]
    environment = {**os.environ, "GATEWAY_BASE_URL": base_url, "GATEWAY_API_KEY": "gw_live_k"}
    result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert received == [
        {
            "path": "/v1/run",
            "authorization": "Bearer gw_live_k",
            "content_type": "application/json",
            # /leads/{id} has GET and PUT: the call names the one it was made for
            "body": {"api": "hunter", "path": "/leads/7", "method": "PUT", "body": {}},
        }
    ]
