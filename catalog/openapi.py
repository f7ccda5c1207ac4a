"""Reading OpenAPI documents (Swagger 2.0, OpenAPI 3.0 and 3.1) into the catalog's terms.

Nothing here touches the database: ``document_load`` turns bytes into a dict and
``document_parse`` turns that dict into a ``ParsedApi`` that ``catalog.services`` writes.

``$ref`` resolution is written here rather than taken from jsonref or prance: those dereference
the whole document eagerly (slow, and explosive on recursive schemas across 16k operations), while
the catalog needs only lazy look-ups of local JSON pointers for parameters and top-level body
properties.
"""

import datetime
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import yaml

from catalog.paths import template_placeholders
from catalog.requirements import RequirementError, requirements_parse
from catalog.use_cases import UseCaseError, use_cases_clean
from gateway.money import usd_to_micros

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")
PARAMETER_BOUNDS = (
    "enum",
    "default",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "example",
)
PRICE_KINDS = ("fixed", "free", "per_result", "dynamic")
AUTH_TYPES = ("none", "bearer", "header", "query")
MAX_PATH_LENGTH = 500
MAX_ENUM_VALUES = 100
MAX_PARAM_DESCRIPTION = 1000
FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")

try:
    _YamlLoader = yaml.CSafeLoader
except AttributeError:  # libyaml missing: the pure-Python loader reads the same documents
    _YamlLoader = yaml.SafeLoader


class DocumentError(Exception):
    """The document cannot be imported; the message says why, for the person who wrote it."""


@dataclass
class PriceSpec:
    kind: str
    price_micros: int = 0
    result_count_path: str = ""
    result_bound_param: str = ""
    result_max: int | None = None
    input_micros_per_mtok: int = 0
    output_micros_per_mtok: int = 0
    default_max_tokens: int | None = None


@dataclass
class ParsedEndpoint:
    method: str
    path: str
    operation_id: str = ""
    summary: str = ""
    description: str = ""
    use_cases: tuple[str, ...] = ()
    docs_url: str = ""
    body_type: str = ""
    body_content_type: str = ""
    path_params: list = field(default_factory=list)
    query_params: list = field(default_factory=list)
    body_params: list = field(default_factory=list)
    requirements: list = field(default_factory=list)
    price: PriceSpec | None = None
    verified: bool | None = None
    is_payable: bool | None = None
    enabled: bool | None = None
    pagination_params: list = field(default_factory=list)
    poll: tuple[str, str] | None = None


@dataclass
class ParsedApi:
    title: str
    slug: str = ""
    name: str = ""
    description: str = ""
    category: str = ""
    owner_slug: str = ""
    docs_url: str = ""
    verified: bool | None = None
    sandbox: bool | None = None
    auth_type: str | None = None
    auth_name: str = ""
    auth_declared: bool = False
    timeout_seconds: int | None = None
    base_url: str = ""
    endpoints: list[ParsedEndpoint] = field(default_factory=list)
    skipped: int = 0
    warnings: list[str] = field(default_factory=list)


# --- Loading --------------------------------------------------------------------------------------


def document_load(content: bytes | str) -> dict:
    """JSON or YAML text -> the document; DocumentError when it is neither or not a mapping."""
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise DocumentError("not UTF-8 text") from None
    stripped = content.lstrip()
    if not stripped:
        raise DocumentError("the document is empty")
    document: Any
    if stripped[0] in "{[":
        try:
            document = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise DocumentError(f"invalid JSON: {error}") from None
    else:
        try:
            document = yaml.load(stripped, Loader=_YamlLoader)
        except yaml.YAMLError as error:
            raise DocumentError(f"invalid YAML: {_one_line(str(error))}") from None
    if not isinstance(document, dict):
        raise DocumentError("the document is not a mapping of OpenAPI fields")
    return document


# --- $ref -----------------------------------------------------------------------------------------


class _Refs:
    def __init__(self, root: dict, warnings: list[str]):
        self.root = root
        self.warnings = warnings
        self._warned: set[str] = set()

    def deref(self, node: Any) -> Any:
        """Follow a node's $ref chain (cycle-safe); sibling keys override the target's (3.1)."""
        seen: set[str] = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not isinstance(ref, str) or ref in seen:
                return {}
            seen.add(ref)
            target = self._lookup(ref)
            if target is None:
                return {}
            siblings = {key: value for key, value in node.items() if key != "$ref"}
            node = {**target, **siblings} if siblings and isinstance(target, dict) else target
        return node

    def _lookup(self, ref: str) -> Any:
        if not ref.startswith("#"):
            self._warn(ref, f"external $ref {ref!r} is not followed")
            return None
        node: Any = self.root
        for token in ref[1:].lstrip("/").split("/") if ref not in ("#", "#/") else []:
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                self._warn(ref, f"$ref {ref!r} points nowhere")
                return None
        return node

    def _warn(self, ref: str, message: str) -> None:
        if ref not in self._warned:
            self._warned.add(ref)
            self.warnings.append(message)


# --- Parsing --------------------------------------------------------------------------------------


def document_parse(document: dict, *, source_url: str = "") -> ParsedApi:
    """The API and its operations as the catalog stores them. DocumentError names the problem."""
    version = document.get("swagger") or document.get("openapi")
    if version is None:
        raise DocumentError("not an OpenAPI document: it has neither 'swagger' nor 'openapi'")
    version = str(version)
    if version.startswith("2"):
        is_swagger = True
    elif version.startswith("3."):
        is_swagger = False
    else:
        raise DocumentError(f"unsupported OpenAPI version {version!r} (2.0, 3.0 and 3.1 are)")
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    paths = document.get("paths") or {}
    if not isinstance(paths, dict):
        raise DocumentError("'paths' is not a mapping")

    api = ParsedApi(title=_text(info.get("title")))
    refs = _Refs(document, api.warnings)
    _read_api_extension(api, document, info)
    if is_swagger:
        api.base_url = _swagger_base_url(document, source_url)
    else:
        api.base_url = _servers_base_url(document.get("servers"), source_url)
    if not api.base_url:
        api.warnings.append("no base URL (host or servers); set it in the admin before use")
    if not api.auth_declared:
        api.auth_type, api.auth_name = _infer_auth(document, is_swagger)

    global_consumes = document.get("consumes") if is_swagger else None
    seen: set[tuple[str, str]] = set()
    for raw_path, raw_item in paths.items():
        if not isinstance(raw_path, str) or not raw_path.strip() or raw_path.startswith("x-"):
            continue
        item = refs.deref(raw_item)
        if not isinstance(item, dict):
            continue
        path = raw_path.strip()
        if not path.startswith("/"):
            path = "/" + path
        shared_params = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        for method in HTTP_METHODS:
            operation = refs.deref(item.get(method))
            if not isinstance(operation, dict) or method not in item:
                continue
            where = f"{method.upper()} {path}"
            if len(path) > MAX_PATH_LENGTH:
                api.skipped += 1
                api.warnings.append(f"{where[:80]}…: path longer than {MAX_PATH_LENGTH} characters")
                continue
            if (method.upper(), path) in seen:
                api.skipped += 1
                api.warnings.append(f"{where}: declared twice; the first one is kept")
                continue
            seen.add((method.upper(), path))
            endpoint = _parse_operation(
                refs,
                method=method.upper(),
                path=path,
                operation=operation,
                shared_params=shared_params,
                consumes=operation.get("consumes") or global_consumes,
                is_swagger=is_swagger,
            )
            _read_operation_extensions(endpoint, operation, where)
            api.endpoints.append(endpoint)
    _link_polls(api)
    return api


def _read_api_extension(api: ParsedApi, document: dict, info: dict) -> None:
    extension = document.get("x-gateway-api") or {}
    if not isinstance(extension, dict):
        raise DocumentError("x-gateway-api must be a mapping")
    api.slug = _text(extension.get("slug"))
    api.name = _text(extension.get("name")) or api.title
    api.description = _text(extension.get("description") or info.get("description"))
    api.category = _text(extension.get("category"))[:60]
    api.owner_slug = _text(extension.get("owner"))
    external_docs = document.get("externalDocs")
    api.docs_url = _url(extension.get("docsUrl")) or _url(
        external_docs.get("url") if isinstance(external_docs, dict) else None
    )
    api.verified = _flag(extension, "verified", "x-gateway-api.verified")
    api.sandbox = _flag(extension, "sandbox", "x-gateway-api.sandbox")
    if "timeoutSeconds" in extension:
        timeout = extension["timeoutSeconds"]
        if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= 600:
            raise DocumentError("x-gateway-api.timeoutSeconds must be a whole number from 1 to 600")
        api.timeout_seconds = timeout
    if "auth" in extension:
        auth = extension["auth"]
        if not isinstance(auth, dict) or auth.get("type") not in AUTH_TYPES:
            raise DocumentError(f"x-gateway-api.auth.type must be one of: {', '.join(AUTH_TYPES)}")
        name = _text(auth.get("name"))
        if auth["type"] in ("header", "query") and not name:
            raise DocumentError(f"x-gateway-api.auth of type {auth['type']} needs a name")
        api.auth_type, api.auth_name, api.auth_declared = auth["type"], name, True


def _parse_operation(
    refs: _Refs,
    *,
    method: str,
    path: str,
    operation: dict,
    shared_params: list,
    consumes: Any,
    is_swagger: bool,
) -> ParsedEndpoint:
    external_docs = operation.get("externalDocs")
    endpoint = ParsedEndpoint(
        method=method,
        path=path,
        operation_id=_text(operation.get("operationId"))[:200],
        summary=_text(operation.get("summary"))[:500],
        description=_text(operation.get("description")),
        docs_url=_url(external_docs.get("url") if isinstance(external_docs, dict) else None),
    )
    merged: dict[tuple[str, str], dict] = {}
    for raw in [*shared_params, *(_list(operation.get("parameters")))]:
        parameter = refs.deref(raw)
        if isinstance(parameter, dict) and parameter.get("name") and parameter.get("in"):
            merged[(str(parameter["name"]), str(parameter["in"]))] = parameter

    form_fields: list[dict] = []
    has_file = False
    for (name, location), parameter in merged.items():
        if location == "body":
            _read_body_schema(
                endpoint, refs, refs.deref(parameter.get("schema")), _json_type(consumes)
            )
            continue
        schema = refs.deref(parameter.get("schema")) if "schema" in parameter else parameter
        if not isinstance(schema, dict):
            schema = {}
        record = _parameter_record(refs, name, schema, parameter, location == "path")
        if location == "path":
            endpoint.path_params.append(record)
        elif location == "query":
            endpoint.query_params.append(record)
        elif location == "formData":
            has_file = has_file or record["type"] == "file"
            form_fields.append(record)
    if form_fields:
        endpoint.body_type = "object"
        endpoint.body_params = form_fields
        multipart = has_file or "multipart/form-data" in _list(consumes)
        endpoint.body_content_type = FORM_CONTENT_TYPES[1 if multipart else 0]
    if not is_swagger and "requestBody" in operation:
        _read_request_body(endpoint, refs, refs.deref(operation["requestBody"]))

    declared = {param["name"] for param in endpoint.path_params}
    for name in template_placeholders(path):
        if name not in declared:
            endpoint.path_params.append(
                {"name": name, "type": "string", "required": True, "description": ""}
            )
            declared.add(name)
    return endpoint


def _read_request_body(endpoint: ParsedEndpoint, refs: _Refs, body: Any) -> None:
    content = body.get("content") if isinstance(body, dict) else None
    if not isinstance(content, dict) or not content:
        return
    media_types = list(content)
    chosen = next((mt for mt in media_types if _is_json(mt)), None)
    chosen = chosen or next((mt for mt in FORM_CONTENT_TYPES if mt in content), media_types[0])
    media = content.get(chosen)
    schema = refs.deref(media.get("schema")) if isinstance(media, dict) else {}
    _read_body_schema(endpoint, refs, schema, chosen)


def _read_body_schema(endpoint: ParsedEndpoint, refs: _Refs, schema: Any, content_type: str):
    endpoint.body_content_type = str(content_type)[:100]
    if not isinstance(schema, dict):
        endpoint.body_type = "object" if _is_json(content_type) else "string"
        return
    properties, required = _object_properties(refs, schema, depth=0)
    schema_type = _schema_type(schema)
    if properties or schema_type == "object":
        endpoint.body_type = "object"
        endpoint.body_params = [
            _parameter_record(refs, name, refs.deref(prop), {}, name in required)
            for name, prop in properties.items()
            if isinstance(name, str)
        ]
    else:
        endpoint.body_type = schema_type


def _object_properties(refs: _Refs, schema: dict, depth: int) -> tuple[dict, set]:
    """Top-level properties of an object schema, with allOf members merged in."""
    properties: dict = {}
    required: set = set()
    if depth > 8:
        return properties, required
    for member in _list(schema.get("allOf")):
        member_properties, member_required = _object_properties(
            refs, refs.deref(member) or {}, depth + 1
        )
        properties.update(member_properties)
        required.update(member_required)
    if isinstance(schema.get("properties"), dict):
        properties.update(schema["properties"])
    required.update(str(name) for name in _list(schema.get("required")))
    return properties, required


def _exclusive_bounds_as_flags(record: dict[str, Any]) -> None:
    """exclusiveMinimum and exclusiveMaximum as OpenAPI 2 and 3.0 write them: flags on minimum and
    maximum. OpenAPI 3.1 writes the excluded bound itself ("exclusiveMinimum": 0)."""
    for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        value = record.get(flag)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            record[bound] = value
            record[flag] = True
        else:
            record.pop(flag, None)


def _parameter_record(refs: _Refs, name: str, schema: dict, parameter: dict, required: bool):
    if not isinstance(schema, dict):
        schema = {}
    description = _text(parameter.get("description") or schema.get("description"))
    record: dict[str, Any] = {
        "name": str(name),
        "type": _schema_type(schema),
        "required": bool(required or parameter.get("required") is True),
        "description": description[:MAX_PARAM_DESCRIPTION],
    }
    for key in PARAMETER_BOUNDS:
        value = schema.get(key, parameter.get(key))
        # An object is only kept as an example ({"full_name": ...}); as a bound it is malformed.
        if value is None or (isinstance(value, dict) and key != "example"):
            continue
        if key == "enum":
            if not isinstance(value, list) or not value:
                continue
            value = value[:MAX_ENUM_VALUES]
        record[key] = _jsonable(value)
    _exclusive_bounds_as_flags(record)
    if parameter.get("in") == "path" and parameter.get("x-reservedExpansion") is True:
        record["multiSegment"] = True  # Google's {+name}: "projects/p/locations/l"
    if record["type"] == "array":
        items = refs.deref(schema.get("items") or parameter.get("items"))
        if isinstance(items, dict):
            record["items"] = _schema_type(items)
    if "example" not in record and isinstance(schema.get("examples"), list) and schema["examples"]:
        record["example"] = _jsonable(schema["examples"][0])
    return record


def _schema_type(schema: dict) -> str:
    declared = schema.get("type")
    if isinstance(declared, list):
        declared = next((kind for kind in declared if kind != "null"), None)
    if isinstance(declared, str) and declared:
        return declared
    if "properties" in schema or "allOf" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        first = enum[0]
        if isinstance(first, bool):
            return "boolean"
        if isinstance(first, int):
            return "integer"
        if isinstance(first, float):
            return "number"
    return "string"


def _read_operation_extensions(endpoint: ParsedEndpoint, operation: dict, where: str) -> None:
    if "x-gateway-price" in operation:
        endpoint.price = price_parse(operation["x-gateway-price"], where=where)
    endpoint.verified = _flag(operation, "x-gateway-verified", f"{where}: x-gateway-verified")
    if "x-gateway-use-case" in operation:
        try:
            endpoint.use_cases = use_cases_clean(operation["x-gateway-use-case"])
        except UseCaseError as error:
            raise DocumentError(f"{where}: x-gateway-use-case {error}") from None
    endpoint.is_payable = _flag(operation, "x-gateway-payable", f"{where}: x-gateway-payable")
    endpoint.enabled = _flag(operation, "x-gateway-enabled", f"{where}: x-gateway-enabled")
    if "x-gateway-pagination" in operation:
        pagination = operation["x-gateway-pagination"]
        if not isinstance(pagination, list) or not all(isinstance(p, str) for p in pagination):
            raise DocumentError(f"{where}: x-gateway-pagination must be a list of parameter names")
        endpoint.pagination_params = list(pagination)
    if "x-gateway-requirements" in operation:
        declared = [
            param["name"]
            for params in (endpoint.path_params, endpoint.query_params, endpoint.body_params)
            for param in params
        ]
        try:
            endpoint.requirements = requirements_parse(
                operation["x-gateway-requirements"], declared=declared
            )
        except RequirementError as error:
            raise DocumentError(f"{where}: x-gateway-requirements: {error}") from None
    if "x-gateway-poll" in operation:
        poll = operation["x-gateway-poll"]
        if not isinstance(poll, dict) or not _text(poll.get("path")):
            raise DocumentError(f"{where}: x-gateway-poll needs a path (and a method, default GET)")
        endpoint.poll = (_text(poll.get("method") or "GET").upper(), _text(poll["path"]))


def price_parse(value: Any, *, where: str = "price") -> PriceSpec:
    """An x-gateway-price value (a USD string or number, "free", or an object) -> PriceSpec."""
    if isinstance(value, str | int | float | Decimal) and not isinstance(value, bool):
        text = str(value).strip()
        if text.lower() == "free":
            return PriceSpec(kind="free")
        micros = _micros(text, f"{where}: x-gateway-price")
        return PriceSpec(kind="fixed", price_micros=micros) if micros else PriceSpec(kind="free")
    if not isinstance(value, dict) or value.get("kind") not in PRICE_KINDS:
        raise DocumentError(
            f'{where}: x-gateway-price must be a USD amount, "free", or an object whose kind is '
            f"one of: {', '.join(PRICE_KINDS)}"
        )
    kind = value["kind"]
    label = f"{where}: x-gateway-price"
    if kind == "free":
        return PriceSpec(kind="free")
    if kind == "fixed":
        if "usd" not in value:
            raise DocumentError(f"{label} of kind fixed needs usd")
        micros = _micros(value["usd"], label)
        return PriceSpec(kind="fixed", price_micros=micros) if micros else PriceSpec(kind="free")
    if kind == "per_result":
        results_path = _text(value.get("resultsPath"))
        if "usdPerResult" not in value or not results_path:
            raise DocumentError(f"{label} of kind per_result needs usdPerResult and resultsPath")
        return PriceSpec(
            kind="per_result",
            price_micros=_micros(value["usdPerResult"], label),
            result_count_path=results_path[:200],
            result_bound_param=_text(value.get("boundParam"))[:100],
            result_max=_positive_int(value.get("maxResults"), f"{label}.maxResults"),
        )
    if "inputUsdPerMillionTokens" not in value or "outputUsdPerMillionTokens" not in value:
        raise DocumentError(
            f"{label} of kind dynamic needs inputUsdPerMillionTokens and outputUsdPerMillionTokens"
        )
    return PriceSpec(
        kind="dynamic",
        input_micros_per_mtok=_micros(value["inputUsdPerMillionTokens"], label),
        output_micros_per_mtok=_micros(value["outputUsdPerMillionTokens"], label),
        default_max_tokens=_positive_int(
            value.get("defaultMaxTokens"), f"{label}.defaultMaxTokens"
        ),
    )


def _link_polls(api: ParsedApi) -> None:
    """A poll target without its own price is free: the start endpoint charged for the job."""
    by_key = {(endpoint.method, endpoint.path): endpoint for endpoint in api.endpoints}
    for endpoint in api.endpoints:
        if endpoint.poll is None:
            continue
        target = by_key.get(endpoint.poll)
        if target is None:
            api.warnings.append(
                f"{endpoint.method} {endpoint.path}: x-gateway-poll names "
                f"{' '.join(endpoint.poll)}, which the document does not declare"
            )
            endpoint.poll = None
        elif target.price is None:
            target.price = PriceSpec(kind="free")


# --- Base URL and auth ----------------------------------------------------------------------------


def _swagger_base_url(document: dict, source_url: str) -> str:
    source = urlsplit(source_url) if source_url else None
    schemes = [str(scheme).lower() for scheme in _list(document.get("schemes"))]
    scheme = "https" if "https" in schemes or not schemes else schemes[0]
    if not schemes and source and source.scheme:
        scheme = source.scheme
    host = _text(document.get("host")).strip().rstrip("/")
    if not host and source:
        host = source.netloc
    if not host:
        return ""
    host = re.sub(r"^[a-z]+://", "", host)
    base_path = _text(document.get("basePath")).strip()
    if base_path and not base_path.startswith("/"):
        base_path = "/" + base_path
    return f"{scheme}://{host}{base_path}".rstrip("/")[:500]


def _servers_base_url(servers: Any, source_url: str) -> str:
    servers = [server for server in _list(servers) if isinstance(server, dict)]
    if not servers:
        return ""
    server = servers[0]
    url = _text(server.get("url")).strip()
    variables = server.get("variables") if isinstance(server.get("variables"), dict) else {}
    for name, variable in variables.items():
        default = variable.get("default") if isinstance(variable, dict) else None
        if default is not None:
            url = url.replace("{" + str(name) + "}", str(default))
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", url):
        if not source_url:
            return ""
        url = urljoin(source_url, url or "/")
    return url.rstrip("/")[:500]


def _infer_auth(document: dict, is_swagger: bool) -> tuple[str, str]:
    """The provider's auth kind from its security schemes (the secret is set by the operator)."""
    if is_swagger:
        schemes = document.get("securityDefinitions")
    else:
        components = document.get("components")
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
    if not isinstance(schemes, dict) or not schemes:
        return "none", ""
    wanted = [
        name
        for requirement in _list(document.get("security"))
        if isinstance(requirement, dict)
        for name in requirement
    ]
    name = next((name for name in wanted if name in schemes), next(iter(schemes)))
    scheme = schemes[name] if isinstance(schemes[name], dict) else {}
    kind = scheme.get("type")
    if kind == "apiKey" and scheme.get("in") in ("header", "query") and scheme.get("name"):
        return scheme["in"], _text(scheme["name"])[:100]
    if kind == "oauth2" or (kind == "http" and str(scheme.get("scheme")).lower() == "bearer"):
        return "bearer", ""
    return "none", ""


# --- Small helpers --------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _url(value: Any) -> str:
    text = _text(value).strip()
    return text if re.match(r"^https?://\S+$", text) and len(text) <= 500 else ""


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _flag(mapping: dict, key: str, label: str) -> bool | None:
    if key not in mapping:
        return None
    value = mapping[key]
    if isinstance(value, bool):
        return value
    raise DocumentError(f"{label} must be true or false, not {value!r}")


def _micros(value: Any, label: str) -> int:
    if isinstance(value, bool) or not isinstance(value, str | int | float | Decimal):
        raise DocumentError(f"{label}: {value!r} is not a USD amount")
    try:
        micros = usd_to_micros(str(value))
    except ValueError as error:
        raise DocumentError(f"{label}: {error}") from None
    if micros < 0:
        raise DocumentError(f"{label}: {value!r} is negative")
    return micros


def _positive_int(value: Any, label: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DocumentError(f"{label} must be a positive whole number")
    return value


def _is_json(content_type: Any) -> bool:
    text = _text(content_type).lower()
    return text == "application/json" or text.endswith("+json") or text == "*/*"


def _json_type(consumes: Any) -> str:
    types = [str(item) for item in _list(consumes)]
    return next(
        (item for item in types if _is_json(item)), types[0] if types else "application/json"
    )


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, float) and value != value:  # NaN has no JSON form
        return None
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _one_line(text: str) -> str:
    return " ".join(text.split())
