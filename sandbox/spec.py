"""The seed catalog as the sandbox sees it: every operation of catalog/providers/*.yaml.

The documents are parsed once per process and turned into a route table per API slug: a list of
compiled path templates, literal templates first, so ``/v2/companies/by-email`` wins over
``/v2/companies/{domain}``. The sandbox needs no database, so a fresh install answers at once.
"""

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from django.conf import settings

from catalog.requirements import requirements_parse

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
METHODS = ("get", "post", "put", "patch", "delete")
_PARAM = re.compile(r"\{([^}/]+)\}")


@dataclass(frozen=True)
class Param:
    name: str
    location: str  # path | query
    required: bool
    schema: dict
    description: str = ""


@dataclass(frozen=True)
class Operation:
    slug: str
    category: str
    method: str
    template: str
    operation_id: str
    summary: str
    description: str
    params: tuple[Param, ...]
    body_schema: dict | None
    body_required: bool
    price: object
    pagination: tuple[str, ...]
    poll: dict | None
    # Rules that span parameters (catalog.requirements), which the provider enforces too.
    requirements: tuple[dict, ...] = ()

    @property
    def per_result(self) -> dict | None:
        price = self.price
        return price if isinstance(price, dict) and price.get("kind") == "per_result" else None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.slug, self.method, self.template)

    def param(self, name: str) -> Param | None:
        return next((param for param in self.params if param.name == name), None)

    def body_property(self, name: str) -> dict | None:
        if not self.body_schema:
            return None
        return (self.body_schema.get("properties") or {}).get(name)

    def input_schema(self, name: str) -> dict | None:
        param = self.param(name)
        return param.schema if param else self.body_property(name)

    @property
    def text(self) -> str:
        """Everything that names what the operation does, for keyword matching."""
        return " ".join((self.template, self.operation_id, self.summary, self.description)).lower()


@dataclass
class ApiSpec:
    slug: str
    name: str
    category: str
    auth: dict
    operations: list[Operation] = field(default_factory=list)
    # (compiled template, {method: operation}), most specific first.
    routes: list[tuple[re.Pattern, dict[str, Operation]]] = field(default_factory=list)
    poll_targets: set[tuple[str, str]] = field(default_factory=set)

    def match(self, method: str, path: str) -> tuple[Operation | None, dict, list[str]]:
        """(operation, path params, allowed methods); no operation when nothing matches."""
        path = _normalise(path)
        for pattern, by_method in self.routes:
            found = pattern.match(path)
            if found is None:
                continue
            operation = by_method.get(method)
            if operation is None:
                return None, {}, sorted(by_method)
            return operation, found.groupdict(), sorted(by_method)
        return None, {}, []


def _normalise(path: str) -> str:
    return path.rstrip("/") or "/"


def _compile(template: str) -> re.Pattern:
    pattern, position = "", 0
    template = _normalise(template)
    for found in _PARAM.finditer(template):
        pattern += re.escape(template[position : found.start()])
        pattern += f"(?P<{group_name(found.group(1))}>[^/]+)"
        position = found.end()
    pattern += re.escape(template[position:])
    return re.compile(f"^{pattern}$")


def group_name(name: str) -> str:
    # Regex group names must be identifiers; every seed path parameter already is one.
    return re.sub(r"\W", "_", name)


def _specificity(template: str) -> tuple[int, int]:
    literal = _PARAM.sub("", template)
    return (len(_PARAM.findall(template)), -len(literal))


def _operation(slug: str, category: str, method: str, template: str, raw: dict, shared: list):
    params = []
    for item in [*shared, *(raw.get("parameters") or [])]:
        if item.get("in") not in ("path", "query"):
            continue
        params.append(
            Param(
                name=item["name"],
                location=item["in"],
                required=bool(item.get("required")) or item["in"] == "path",
                schema=item.get("schema") or {},
                description=item.get("description", ""),
            )
        )
    body = raw.get("requestBody") or {}
    schema = ((body.get("content") or {}).get("application/json") or {}).get("schema")
    declared = [param.name for param in params] + list((schema or {}).get("properties") or {})
    requirements = requirements_parse(raw.get("x-gateway-requirements") or [], declared=declared)
    return Operation(
        slug=slug,
        category=category,
        method=method.upper(),
        template=template,
        operation_id=raw.get("operationId", ""),
        summary=raw.get("summary", ""),
        description=raw.get("description", ""),
        params=tuple(params),
        body_schema=schema,
        body_required=bool(body.get("required")),
        price=raw.get("x-gateway-price"),
        pagination=tuple(raw.get("x-gateway-pagination") or ()),
        poll=raw.get("x-gateway-poll"),
        requirements=tuple(requirements),
    )


def parse_document(document: dict) -> ApiSpec:
    info = document.get("x-gateway-api") or {}
    api = ApiSpec(
        slug=info["slug"],
        name=info.get("name", info["slug"]),
        category=info.get("category", ""),
        auth=info.get("auth") or {},
    )
    by_template: dict[str, dict[str, Operation]] = {}
    for template, item in (document.get("paths") or {}).items():
        shared = item.get("parameters") or []
        for method in METHODS:
            if method in item:
                operation = _operation(
                    api.slug, api.category, method, template, item[method], shared
                )
                api.operations.append(operation)
                by_template.setdefault(template, {})[operation.method] = operation
                if operation.poll:
                    api.poll_targets.add((operation.poll["method"].upper(), operation.poll["path"]))
    for template in sorted(by_template, key=_specificity):
        api.routes.append((_compile(template), by_template[template]))
    return api


def providers_dir() -> Path:
    return Path(settings.BASE_DIR) / "catalog" / "providers"


@functools.cache
def _load(directory: str) -> dict[str, ApiSpec]:
    apis = {}
    for path in sorted(Path(directory).glob("*.yaml")):
        with path.open(encoding="utf-8") as handle:
            api = parse_document(yaml.load(handle, Loader=YAML_LOADER))
        apis[api.slug] = api
    return apis


def catalog() -> dict[str, ApiSpec]:
    """Every sandbox API by slug, parsed on first use and then kept for the process."""
    return _load(str(providers_dir()))


def api_spec(slug: str) -> ApiSpec | None:
    return catalog().get(slug)
