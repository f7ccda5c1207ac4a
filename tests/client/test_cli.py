"""The gw command run as a user runs it: a subprocess against a live gateway whose providers are
all the built-in sandbox, its output piped (so plain text), its exit code checked."""

import json
import os
import subprocess
import sys

import pytest

from tests.factories import make_persona
from tests.http_double import closed_port

pytestmark = pytest.mark.django_db(transaction=True)

# Variables that would make Rich colour piped output or change what gw reads.
UNSET = ("GATEWAY_API_KEY", "GATEWAY_BASE_URL", "FORCE_COLOR", "PY_COLORS", "TTY_COMPATIBLE")


def gw(*args: str, key: str | None = None, base_url: str | None = None, stdin: str | None = None):
    environment = {name: value for name, value in os.environ.items() if name not in UNSET}
    if key is not None:
        environment["GATEWAY_API_KEY"] = key
    if base_url is not None:
        environment["GATEWAY_BASE_URL"] = base_url
    result = subprocess.run(
        [sys.executable, "-m", "gw_client.cli", *args],
        env=environment,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "\x1b[" not in result.stdout + result.stderr, "colour codes in piped output"
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def as_test(gateway, newcomer):
    """gw with the newcomer's test key: sandbox answers, never charged."""
    return lambda *args, **kwargs: gw(*args, key=newcomer.test_key, base_url=gateway, **kwargs)


@pytest.fixture
def as_live(gateway, newcomer, settings):
    """gw with the newcomer's live key, charged, answered by the sandbox as `make run` does."""
    settings.LIVE_CALLS_USE_SANDBOX = True
    return lambda *args, **kwargs: gw(*args, key=newcomer.live_key, base_url=gateway, **kwargs)


# Help, version and usage errors need no gateway.


def test_the_help_takes_a_newcomer_from_search_to_run_to_usage():
    result = gw("--help")

    assert result.returncode == 0
    for step in ("gw search", "gw endpoint hunter", "gw run hunter", "gw usage", "GATEWAY_API_KEY"):
        assert step in result.stdout
    for code in ("0  ok", "2  usage error", "3  no key", "4  not enough credits", "5  unknown"):
        assert code in result.stdout
    assert "6  the provider failed" in result.stdout
    assert "7  the gateway could not be reached" in result.stdout


def test_every_command_has_its_help():
    for command in (
        "search",
        "providers",
        "endpoints",
        "endpoint",
        "run",
        "account",
        "balance",
        "usage",
        "transactions",
        "integrate",
    ):
        result = gw(command, "--help")
        assert result.returncode == 0, command
        assert f"gw {command}" in result.stdout


def test_it_prints_its_version():
    result = gw("--version")

    assert result.returncode == 0
    assert result.stdout.strip() == "gw 1.0.0"


def test_a_missing_key_is_an_auth_exit_naming_the_variable_and_the_flag():
    result = gw("balance", base_url="http://127.0.0.1:9")

    assert result.returncode == 3
    assert "GATEWAY_API_KEY" in result.stderr
    assert "--key" in result.stderr


def test_a_malformed_option_is_a_usage_error():
    assert gw("run", "hunter", "/v2/domain-search", "-q", "domain", key="k").returncode == 2
    assert gw("run", "hunter", "/v2/x", "--body", "{not json", key="k").returncode == 2
    assert gw("search", key="k").returncode == 2
    assert gw("usage", "--days", "0", key="k").returncode == 2


def test_an_unreachable_gateway_is_a_network_exit():
    result = gw("balance", key="gw_test_x", base_url=f"http://127.0.0.1:{closed_port()}")

    assert result.returncode == 7
    assert result.stderr.startswith("error: cannot reach the gateway")


# Discovery


def test_search_shows_the_endpoints_that_answer_a_need_with_their_price(as_test):
    result = as_test("search", "find", "the", "email", "addresses", "at", "a", "company", "domain")

    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if "/v2/domain-search" in line)
    assert row.split()[:4] == ["hunter", "GET", "/v2/domain-search", "$0.0025"]
    assert "gw endpoint" in result.stderr


def test_search_as_json_is_the_gateways_answer(as_test):
    result = as_test("--json", "search", "find the email addresses at a company domain", "-n", "3")

    answer = json.loads(result.stdout)
    assert answer["count"] == 3
    assert "hunter" in [api["slug"] for api in answer["results"]]


def test_providers_lists_a_page_of_the_catalog_and_how_to_get_the_next(as_test):
    result = as_test("providers", "--limit", "3")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["API", "Name"]
    assert [line.split()[0] for line in lines[1:]] == ["adzuna", "apify", "apollo"]
    assert "gw providers --offset 3" in result.stderr


def test_providers_as_json_pages_with_offset(as_test):
    result = as_test("providers", "--limit", "2", "--offset", "1", "--json")

    answer = json.loads(result.stdout)
    assert [api["slug"] for api in answer["apis"]] == ["apify", "apollo"]
    assert answer["pagination"] == {"limit": 2, "offset": 1, "hasMore": True}


def test_endpoints_lists_an_apis_endpoints_with_method_path_and_price(as_test):
    result = as_test("endpoints", "hunter")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Hunter (hunter)")
    row = next(line for line in result.stdout.splitlines() if "/v2/domain-search" in line)
    assert row.split()[:3] == ["GET", "/v2/domain-search", "$0.0025/result"]


def test_endpoints_as_json_is_the_apis_catalog_record(as_test):
    result = as_test("endpoints", "hunter", "--json")

    record = json.loads(result.stdout)
    assert record["slug"] == "hunter"
    assert "/v2/domain-search" in [endpoint["path"] for endpoint in record["endpoints"]]


def test_endpoints_of_an_unknown_api_is_a_not_found_exit(as_test):
    result = as_test("endpoints", "nosuch")

    assert result.returncode == 5
    assert result.stderr == "error: no API 'nosuch' in the catalog (NOT_FOUND)\n"


def test_endpoint_shows_the_price_the_parameters_and_the_run_line(as_test):
    result = as_test("endpoint", "zerobounce", "/v2/validate")

    assert result.returncode == 0, result.stderr
    assert "GET /v2/validate" in result.stdout
    assert "Query parameters" in result.stdout
    email = next(line for line in result.stdout.splitlines() if line.startswith("email "))
    assert email.split()[:3] == ["email", "string", "yes"]
    assert "gw run zerobounce /v2/validate -q email=" in result.stderr


def test_endpoint_as_json_is_the_details_answer(as_test):
    result = as_test("endpoint", "lusha", "/v2/person", "--method", "POST", "--json")

    answer = json.loads(result.stdout)
    assert answer["endpoint"]["method"] == "POST"
    assert answer["api"]["slug"] == "lusha"


def test_endpoint_of_an_unknown_path_is_a_not_found_exit(as_test):
    result = as_test("endpoint", "hunter", "/v9/nothing")

    assert result.returncode == 5
    assert "(NOT_FOUND)" in result.stderr


def test_integrate_prints_a_snippet_that_calls_the_endpoint(as_test):
    result = as_test("integrate", "hunter", "/v2/domain-search", "--format", "curl")

    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("curl ")
    assert '"api": "hunter"' in result.stdout


def test_integrate_as_json_carries_the_snippets_and_the_setup(as_test):
    result = as_test("--json", "integrate", "hunter", "/v2/domain-search", "-f", "run-api")

    answer = json.loads(result.stdout)
    assert set(answer["snippets"]) == {"run-api"}
    assert "setup" in answer


# The paid call


def test_run_prints_the_providers_data_and_the_price_and_request_on_stderr(as_test):
    result = as_test(
        "run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=3"
    )

    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert len(data["data"]["emails"]) == 3
    assert result.stderr.startswith("$0.0075 not charged · request run_")


def test_run_as_json_is_the_whole_answer(as_test):
    result = as_test("run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "--json")

    answer = json.loads(result.stdout)
    assert answer["success"] is True
    assert answer["billing"]["charged"] is False
    assert answer["requestId"].startswith("run_")
    assert result.stderr == ""


def test_a_live_key_is_charged_and_a_next_page_named_by_its_parent_is_not(as_live):
    first = as_live(
        "run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4"
    )
    assert first.returncode == 0, first.stderr
    assert first.stderr.startswith("$0.01 charged · request run_")
    parent = first.stderr.split("request ")[1].strip()

    second = as_live(
        "run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4",
        "-q", "offset=4", "--parent", parent,
    )  # fmt: skip

    assert second.returncode == 0, second.stderr
    assert second.stderr.startswith("$0.01 not charged")
    assert as_live("balance").stdout == "$4.99 available\n"


def test_run_takes_a_body_from_a_file_or_stdin_and_path_params(as_live, tmp_path):
    body = tmp_path / "crawl.json"
    body.write_text('{"url": "https://example.com", "limit": 5}')

    started = as_live("run", "firecrawl", "/v1/crawl", "--body", f"@{body}")
    assert started.returncode == 0, started.stderr
    crawl_id = json.loads(started.stdout)["id"]
    poll = as_live(
        "run", "firecrawl", "/v1/crawl/{id}", "--path-param", f"id={crawl_id}", "--method", "GET"
    )
    inline = as_live("run", "firecrawl", "/v1/crawl", "--body", "@-", stdin=body.read_text())

    assert poll.returncode == 0, poll.stderr
    assert json.loads(poll.stdout)["status"] == "scraping"
    assert inline.returncode == 0, inline.stderr


def test_a_retry_with_the_same_idempotency_key_is_not_charged_twice(as_live):
    call = ("run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4")

    first = as_live(*call, "--idempotency-key", "order-17", "--json")
    again = as_live(*call, "--idempotency-key", "order-17", "--json")

    assert json.loads(first.stdout)["requestId"] == json.loads(again.stdout)["requestId"]
    assert as_live("balance").stdout == "$4.99 available\n"


def test_run_on_an_unknown_api_is_a_not_found_exit_naming_the_request(as_test):
    result = as_test("run", "nosuch", "/v1/anything")

    assert result.returncode == 5
    assert result.stderr.startswith("error: Unknown API: nosuch (NOT_FOUND, request run_")
    assert result.stdout == ""


def test_run_without_enough_credits_is_its_own_exit(gateway, settings):
    settings.LIVE_CALLS_USE_SANDBOX = True
    broke = make_persona("broke@example.com")

    result = gw(
        "run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com",
        key=broke.live_key, base_url=gateway,
    )  # fmt: skip

    assert result.returncode == 4
    assert "(INSUFFICIENT_CREDITS, request run_" in result.stderr
    assert "$0.025" in result.stderr  # Hunter's default of 10 results, not the maximum of 100


def test_a_provider_failure_is_an_upstream_exit_with_the_providers_status(as_live):
    result = as_live(
        "run", "zerobounce", "/v2/validate", "-q", "email=a@b.co", "-q", "sandbox_fault=503"
    )

    assert result.returncode == 6
    assert "(UPSTREAM_ERROR, provider status 503, request run_" in result.stderr
    assert as_live("balance").stdout == "$5.00 available\n"


def test_a_request_the_gateway_refuses_as_invalid_is_a_usage_exit(as_test):
    result = as_test("run", "hunter", "/v2/domain-search", "--body", "{}", "--json")

    assert result.returncode == 2
    assert "(INVALID_REQUEST, request run_" in result.stderr
    assert result.stdout == ""


# Account and credits


def test_account_says_who_the_key_is_and_its_mode(as_test):
    result = as_test("account")

    assert result.returncode == 0, result.stderr
    assert "newcomer@example.com" in result.stdout
    assert "test: calls the sandbox, never charged" in result.stdout


def test_account_as_json_is_the_whoami_answer(as_live):
    answer = json.loads(as_live("account", "--json").stdout)

    assert answer["data"]["key"]["mode"] == "live"
    assert answer["data"]["owner"] == {"type": "user", "name": "newcomer@example.com"}


def test_a_bad_key_is_an_auth_exit(gateway):
    for args in (("balance",), ("--json", "balance"), ("search", "emails")):
        result = gw(*args, key="gw_live_" + "x" * 43, base_url=gateway)
        assert result.returncode == 3
        assert result.stderr.startswith("error: ")
        assert "(UNAUTHORIZED)" in result.stderr


def test_balance_is_in_dollars(as_test):
    result = as_test("balance")

    assert result.returncode == 0
    assert result.stdout == "$5.00 available\n"
    assert json.loads(as_test("balance", "--json").stdout)["balance"] == "$5.00"


def test_usage_lists_the_calls_made_and_what_they_cost(as_live):
    call = as_live("run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4")
    request_id = call.stderr.split("request ")[1].strip()

    result = as_live("usage", "--days", "7", "--limit", "5")

    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if request_id in line)
    assert row.split()[2:7] == ["hunter", "GET", "/v2/domain-search", "$0.01", "completed"]
    assert result.stdout.splitlines()[-1] == "$0.01 spent on 1 call in the last 7 days"


def test_usage_as_json_is_the_gateways_page(as_live):
    as_live("run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4")

    answer = json.loads(as_live("usage", "--limit", "1", "--json").stdout)

    assert answer["pagination"]["limit"] == 1
    assert answer["usage"][0]["api"] == "hunter"
    assert answer["totalSpent"] == "$0.01"


def test_transactions_list_the_grant_and_the_charges_in_dollars(as_live):
    as_live("run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4")

    result = as_live("transactions")

    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()[1:]]
    assert [row[3:5] for row in rows] == [["api_call", "-$0.01"], ["grant", "$5.00"]]


def test_transactions_as_json_pages_with_limit_and_offset(as_live):
    as_live("run", "hunter", "/v2/domain-search", "-q", "domain=stripe.com", "-q", "limit=4")

    answer = json.loads(as_live("transactions", "--limit", "1", "--offset", "1", "--json").stdout)

    assert [entry["type"] for entry in answer["transactions"]] == ["grant"]
    assert answer["pagination"]["offset"] == 1
