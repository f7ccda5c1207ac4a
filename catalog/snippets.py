"""Code that calls an endpoint, generated from its real parameters.

Required parameters get example values derived from their example, default, enum, type, format
and name. Gateway snippets read the key from GATEWAY_API_KEY and the address from
GATEWAY_BASE_URL (defaulting to settings.GATEWAY_BASE_URL); payment-rail snippets read the paying
wallet's key from PRIVATE_KEY and call settings.X402_URL.
"""

import json
import re
import shlex
from typing import Any
from urllib.parse import quote, urlencode

from django.conf import settings

from catalog.paths import path_in_url, template_fill
from catalog.requirements import requirements_fill
from catalog.sdk import sdk_package_name, sdk_tarball_url
from catalog.texts import split_identifier

FORMATS = ("gw-sdk", "run-api", "curl", "x402-fetch", "x402-python")
RAIL_FORMATS = ("x402-fetch", "x402-python")
ALL_FORMATS = (*FORMATS, "all")
# The gw-sdk snippet uses top-level await, which node allows in an ES module: a .mjs file.
SDK_SNIPPET_FILE = "call.mjs"

# Matched against the parameter's name as lower-case words joined by "_" ("jurisdictionCode" ->
# "jurisdiction_code"), a whole word (or its plural) at a time: "uri" must not find "jurisdiction".
# The first match wins, so "phone_number" is a phone and "company_id" an identifier.
_NAMED_EXAMPLES = tuple(
    (re.compile(rf"(?<![a-z])(?:{words})s?(?![a-z])"), value)
    for words, value in (
        ("e_?mail", "jane@example.com"),
        ("phone|mobile", "+15555550100"),
        ("url|website|link|uri|href|homepage", "https://example.com"),
        ("domain|host|hostname", "example.com"),
        ("ip|ip_address", "192.0.2.1"),
        ("id|uuid|key|number|no", "123"),
        ("first_?name|given_?name", "Jane"),
        ("last_?name|family_?name|surname", "Doe"),
        ("company|organi[sz]ation|org", "Example Inc"),
        ("country", "US"),
        ("lang|language|locale", "en"),
        ("currency", "USD"),
        ("q|query|search|keyword|prompt|term|text", "example"),
        ("user_?name|screen_name|handle|login", "janedoe"),
        ("name", "Jane Doe"),
    )
)
_FORMAT_EXAMPLES = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "email": "jane@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "192.0.2.1",
}


def example_value(param: dict) -> Any:
    """A plausible value for a parameter record (example, default, enum, then type and name)."""
    for key in ("example", "default"):
        if param.get(key) is not None:
            return param[key]
    if param.get("enum"):
        return param["enum"][0]
    kind = param.get("type") or "string"
    name = "_".join(split_identifier(str(param.get("name", ""))))
    if kind in ("integer", "number"):
        value = 10 if re.search(r"limit|size|count|per_?page|max", name) else 1
        if isinstance(param.get("minimum"), int | float) and value < param["minimum"]:
            value = param["minimum"]
        if isinstance(param.get("maximum"), int | float) and value > param["maximum"]:
            value = param["maximum"]
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    if kind == "array":
        return [example_value({"name": name, "type": param.get("items", "string")})]
    if kind == "object":
        return {}
    if kind == "file":
        return "example.txt"
    if param.get("format") in _FORMAT_EXAMPLES:
        return _FORMAT_EXAMPLES[param["format"]]
    value = next((value for pattern, value in _NAMED_EXAMPLES if pattern.search(name)), "example")
    if param.get("multiSegment"):
        # A resource name ("projects/p/locations/l"): the pattern its description gives, filled
        # in; without one, a person's name would mislead more than a neutral word.
        described = resource_name_example(str(param.get("description") or ""))
        return described or ("example" if value in _PERSON_EXAMPLES else value)
    return value


_PERSON_EXAMPLES = {"Jane", "Doe", "Jane Doe", "janedoe"}
# A resource name as descriptions write it: in code (`projects/{project}/topics/{topic}`,
# "projects/[PROJECT_ID]", <code>...</code>), or bare when it holds a slot
# (enterprises/{enterpriseId}/devices/{deviceId}). <var>x</var> is Google's slot markup.
_VAR_MARKUP = re.compile(r"<var>([^<>]+)</var>")
_CODE_SPAN = re.compile(r"`([^`]+)`|\"([^\"]+)\"|<code>(.*?)</code>", re.S)
_BARE_NAME = re.compile(r"(?<![\w/.-])[A-Za-z][\w.-]*/\S+")
_SLOT = re.compile(
    r"\{(?P<braced>[^}=]*)(?:=[^}]*)?\}|<(?P<angled>[^>]*)>|\[(?P<bracketed>[^\]]*)\]"
    r"|(?P<star>\*\*?)|(?P<upper>[A-Z][A-Z0-9_]*[A-Z0-9])"
)
_RESOURCE_NAME = re.compile(r"[A-Za-z][\w.~!$&'()*+,;=:@%-]*(?:/[\w.~!$&'()*+,;=:@%-]+)+")


def resource_name_example(description: str) -> str | None:
    """The first resource-name pattern a description gives, its slots filled in:
    "`projects/{project_id}/locations/{location}`" -> "projects/my-project/locations/us-central1".
    None when the description gives none."""
    text = _VAR_MARKUP.sub(r"{\1}", description).replace("`{", "{")
    coded = [next(filter(None, match.groups())) for match in _CODE_SPAN.finditer(text)]
    bare = [word for word in _BARE_NAME.findall(text) if any(c in word for c in "{<[")]
    for candidate in (*coded, *bare):
        candidate = candidate.strip().rstrip(".,;:)")
        if "/" not in candidate or "//" in candidate or candidate.lower().startswith("http"):
            continue
        segments = candidate.strip("/").split("/")
        value = "/".join(
            _slot_example(segment, segments[position - 1] if position else "")
            for position, segment in enumerate(segments)
        )
        if _RESOURCE_NAME.fullmatch(value):
            return value
    return None


def _slot_example(segment: str, collection: str) -> str:
    """A segment as it is, or a slot's example named after the slot or the collection before it:
    {project_id} -> my-project, [LOCATION] -> us-central1, topics/* -> my-topic."""
    slot = _SLOT.fullmatch(segment)
    if not slot:
        return segment
    named = next((slot[key] for key in ("braced", "angled", "bracketed", "upper") if slot[key]), "")
    words = [w for w in split_identifier(named) if w not in ("id", "number", "name", "or")]
    if not words:
        singular = re.sub(r"ies$", "y", collection)
        words = split_identifier(singular[:-1] if singular.endswith("s") else singular)
    if words and words[-1] in ("location", "region", "zone"):
        return "us-central1"
    return "my-" + "-".join(words or ["resource"])


def fill_path(endpoint, path_values: dict[str, str]) -> str:
    """The catalog path with every placeholder given a value (the caller's, else an example)."""
    examples = {param["name"]: param for param in endpoint.path_params}

    def text_for(name: str) -> str:
        if name in path_values:
            return path_values[name]
        param = examples.get(name, {"name": name})
        safe = ",/" if param.get("multiSegment") else ","
        return quote(_path_text(example_value(param)), safe=safe)

    return template_fill(endpoint.path, text_for)


def _path_text(value: Any) -> str:
    """A value as a path segment carries it: an array as comma-separated values (OpenAPI 2's
    default for path parameters), a boolean as JSON writes it."""
    if isinstance(value, list):
        return ",".join(_path_text(item) for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _example_names(endpoint) -> set[str]:
    """The parameters an example call sends: the required ones, grown to meet the endpoint's
    requirements that span parameters (Hunter's email finder: domain, first and last name)."""
    params = [*endpoint.path_params, *endpoint.query_params]
    if endpoint.takes_body:
        params += endpoint.body_params
    required = {param["name"] for param in params if param.get("required")}
    return requirements_fill(endpoint.requirements, required)


def _example_values(params: list[dict], names: set[str]) -> dict[str, Any]:
    return {param["name"]: example_value(param) for param in params if param["name"] in names}


def _required_values(endpoint, params: list[dict]) -> dict[str, Any]:
    return _example_values(params, _example_names(endpoint))


def run_request(
    endpoint, path_values: dict[str, str], *, with_method: bool = False
) -> dict[str, Any]:
    """The JSON body of a POST /v1/run that calls the endpoint with its required parameters;
    ``with_method`` names the method, for a path that /v1/run would otherwise not resolve to this
    endpoint alone (see catalog.selectors.run_needs_method)."""
    payload: dict[str, Any] = {"api": endpoint.api.slug, "path": fill_path(endpoint, path_values)}
    if with_method:
        payload["method"] = endpoint.method
    names = _example_names(endpoint)
    query = _example_values(endpoint.query_params, names)
    if query:
        payload["query"] = query
    if endpoint.takes_body and endpoint.body_type == "array":
        payload["body"] = []
    elif endpoint.takes_body and endpoint.body_type:
        payload["body"] = _example_values(endpoint.body_params, names)
    return payload


def run_api_text(endpoint, path_values: dict[str, str], *, with_method: bool = False) -> str:
    """The exact /v1/run call, for details: POST <base>/v1/run {...}."""
    body = json.dumps(
        run_request(endpoint, path_values, with_method=with_method), ensure_ascii=False
    )
    return f"POST {settings.GATEWAY_BASE_URL}/v1/run {body}"


def rail_payable(endpoint) -> bool:
    """Whether the endpoint answers on the pay-per-call rails of this deployment."""
    return settings.RAILS_ENABLED and endpoint.is_payable


def rail_url(rail_base: str, slug: str, path: str) -> str:
    """<rail>/<slug><path>, with characters a URL path cannot carry as-is (such as #) escaped."""
    return f"{rail_base}/{slug}{path_in_url(path)}"


def setup_commands() -> dict[str, str]:
    return {
        "sdk": (
            f"npm install {sdk_tarball_url()}"
            f"  # {sdk_package_name()} is not on the npm registry yet: this gateway serves it"
            " (from a checkout of the gateway: npm install <checkout>/sdk/typescript)\n"
            "export GATEWAY_API_KEY=gw_live_...  # a key from the dashboard\n"
            f"export GATEWAY_BASE_URL={settings.GATEWAY_BASE_URL}\n"
            f"node {SDK_SNIPPET_FILE}  # the snippet saved as {SDK_SNIPPET_FILE}"
            " (an ES module: it uses top-level await)"
        ),
        "x402": (
            "npm install @x402/fetch @x402/evm viem  # JavaScript (x402 v2)\n"
            "pip install 'x402[evm,requests]'  # Python\n"
            "export PRIVATE_KEY=0x...  # the key of the wallet that pays in USDC"
        ),
    }


def snippet(
    format: str, endpoint, path_values: dict[str, str], *, with_method: bool = False
) -> str:
    return _BUILDERS[format](endpoint, path_values, with_method)


# --- The formats ----------------------------------------------------------------------------------


def _gw_sdk(endpoint, path_values, with_method) -> str:
    request = _indented_json(run_request(endpoint, path_values, with_method=with_method))
    return (
        f'import {{ Gateway }} from "{sdk_package_name()}";\n'
        "\n"
        "const gateway = new Gateway({\n"
        "  apiKey: process.env.GATEWAY_API_KEY,\n"
        f"  baseUrl: process.env.GATEWAY_BASE_URL ?? {json.dumps(settings.GATEWAY_BASE_URL)},\n"
        "});\n"
        "\n"
        f"const result = await gateway.run({request});\n"
        "console.log(JSON.stringify(result.data, null, 2));\n"
    )


def _run_api(endpoint, path_values, with_method) -> str:
    request = _python_literal(run_request(endpoint, path_values, with_method=with_method))
    return (
        "import os\n"
        "\n"
        "import requests\n"
        "\n"
        f'base_url = os.environ.get("GATEWAY_BASE_URL", {json.dumps(settings.GATEWAY_BASE_URL)})\n'
        "response = requests.post(\n"
        '    f"{base_url}/v1/run",\n'
        '    headers={"Authorization": f"Bearer {os.environ[\'GATEWAY_API_KEY\']}"},\n'
        f"    json={_indent(request, 4)},\n"
        "    timeout=60,\n"
        ")\n"
        "print(response.status_code)\n"
        "print(response.json())\n"
    )


def _curl(endpoint, path_values, with_method) -> str:
    body = json.dumps(
        run_request(endpoint, path_values, with_method=with_method), ensure_ascii=False
    )
    base = '"${GATEWAY_BASE_URL:-' + settings.GATEWAY_BASE_URL + '}/v1/run"'
    return (
        f"curl -sS -X POST {base} \\\n"
        '  -H "Authorization: Bearer $GATEWAY_API_KEY" \\\n'
        '  -H "Content-Type: application/json" \\\n'
        f"  -d {shlex.quote(body)}\n"
    )


def _rail_call(endpoint, path_values) -> tuple[str, dict | None, Any]:
    """The rail URL (with required query parameters) and the JSON body, if the call has one."""
    url = rail_url(settings.X402_URL, endpoint.api.slug, fill_path(endpoint, path_values))
    query = {
        k: _query_text(v) for k, v in _required_values(endpoint, endpoint.query_params).items()
    }
    request = run_request(endpoint, path_values)
    return url, query or None, request.get("body")


def _x402_fetch(endpoint, path_values, with_method) -> str:
    url, query, body = _rail_call(endpoint, path_values)
    if query:
        separator = "&" if "?" in url else "?"
        url = f"{url}{separator}{urlencode(query, doseq=True)}"
    options = [f"  method: {json.dumps(endpoint.method)},"]
    if body is not None:
        options.append('  headers: { "Content-Type": "application/json" },')
        options.append(f"  body: JSON.stringify({_indent(_indented_json(body), 2)}),")
    return (
        'import { wrapFetchWithPaymentFromConfig } from "@x402/fetch";\n'
        'import { ExactEvmScheme } from "@x402/evm";\n'
        'import { privateKeyToAccount } from "viem/accounts";\n'
        "\n"
        "const account = privateKeyToAccount(process.env.PRIVATE_KEY);\n"
        "const fetchWithPayment = wrapFetchWithPaymentFromConfig(fetch, {\n"
        '  schemes: [{ network: "eip155:*", client: new ExactEvmScheme(account) }],\n'
        "});\n"
        "\n"
        f"const response = await fetchWithPayment({json.dumps(url)}, {{\n"
        + "\n".join(options)
        + "\n});\n"
        "console.log(response.status, await response.json());\n"
    )


def _x402_python(endpoint, path_values, with_method) -> str:
    url, query, body = _rail_call(endpoint, path_values)
    arguments = [f"    {json.dumps(endpoint.method)},", f"    {json.dumps(url)},"]
    if query:
        arguments.append(f"    params={_indent(_python_literal(query), 4)},")
    if body is not None:
        arguments.append(f"    json={_indent(_python_literal(body), 4)},")
    return (
        "import os\n"
        "\n"
        "from eth_account import Account\n"
        "from x402 import x402ClientSync\n"
        "from x402.http.clients import x402_requests\n"
        "from x402.mechanisms.evm.exact import register_exact_evm_client\n"
        "from x402.mechanisms.evm.signers import EthAccountSigner\n"
        "\n"
        'signer = EthAccountSigner(Account.from_key(os.environ["PRIVATE_KEY"]))\n'
        "client = x402ClientSync()\n"
        "register_exact_evm_client(client, signer)\n"
        "session = x402_requests(client)\n"
        "\n"
        "response = session.request(\n" + "\n".join(arguments) + "\n    timeout=60,\n)\n"
        "print(response.status_code)\n"
        "print(response.json())\n"
    )


_BUILDERS = {
    "gw-sdk": _gw_sdk,
    "run-api": _run_api,
    "curl": _curl,
    "x402-fetch": _x402_fetch,
    "x402-python": _x402_python,
}


def _indented_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _python_literal(value: Any, indent: int = 0) -> str:
    """A Python expression for JSON data, laid out like the JSON (JSON strings are valid Python)."""
    inner = " " * (indent + 4)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{inner}{json.dumps(str(key), ensure_ascii=False)}: "
            f"{_python_literal(item, indent + 4)},"
            for key, item in value.items()
        ]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [f"{inner}{_python_literal(item, indent + 4)}," for item in value]
        return "[\n" + "\n".join(items) + "\n" + " " * indent + "]"
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _indent(text: str, spaces: int) -> str:
    return text.replace("\n", "\n" + " " * spaces)


def _query_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [_query_text(item) for item in value]
    return value
