"""Catalog reads: endpoint resolution, list-endpoints pages, endpoint details and search answers.

Nothing here returns an upstream secret; ``provider_api_upstream_secret`` is the one reader, for
the paid-call pipeline.
"""

import json
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, TextField
from django.db.models.functions import Cast, Lower

from catalog import prices, snippets
from catalog.crypto import secret_decrypt
from catalog.models import Endpoint, ProviderApi
from catalog.paths import multi_segment_placeholders, template_literal_length, template_match
from catalog.requirements import requirements_described
from catalog.search import IndexedEndpoint, search_index_current
from catalog.texts import endpoint_brief, text_brief
from catalog.version import catalog_version_current
from gateway.errors import InvalidRequest, NotFound

LIST_CACHE_SECONDS = 3600


def provider_api_upstream_secret(*, api: ProviderApi) -> str:
    """The decrypted credential for the provider ("" when none is set). Never put it in a reply."""
    if not api.upstream_secret_encrypted:
        return ""
    return secret_decrypt(api.upstream_secret_encrypted)


# --- Resolving a path to an endpoint --------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedEndpoint:
    """An enabled endpoint (with its ``api`` loaded) and the values a concrete path gave its
    placeholders: "/v1/jobs/abc" against "/v1/jobs/{id}" gives {"id": "abc"}."""

    endpoint: Endpoint
    path_params: dict[str, str]
    polled: bool = False  # an asynchronous job's polling endpoint (free)

    @property
    def api(self) -> ProviderApi:
        return self.endpoint.api


@dataclass
class _ApiRoutes:
    """One enabled API with its enabled endpoints, as resolution needs them."""

    api: ProviderApi
    by_path: dict[str, list[Endpoint]]
    templates: list[str]
    polled_ids: frozenset[int]
    # each template's placeholders that take several path segments
    multi_segment: dict[str, frozenset[str]]

    def match(self, template: str, path: str) -> dict[str, str] | None:
        return template_match(template, path, self.multi_segment[template])


class _RouteCache:
    """Each process keeps the routes of the APIs it has served, until the catalog version moves.

    The version is read at most every CATALOG_VERSION_CHECK_SECONDS, so an edit is seen within
    that time without a query per call. The cached rows are shared between threads: read only.
    """

    def __init__(self):
        self.version: int | None = None
        self.checked_at = float("-inf")
        self.apis: dict[str, _ApiRoutes] = {}

    def routes(self, slug: str) -> _ApiRoutes | None:
        now = time.monotonic()
        if now - self.checked_at >= settings.CATALOG_VERSION_CHECK_SECONDS:
            version = catalog_version_current()
            if version != self.version:
                self.apis = {}
                self.version = version
            self.checked_at = now
        routes = self.apis.get(slug)
        if routes is None:
            routes = _load_routes(slug)
            if routes is not None:  # unknown slugs are not remembered: callers choose them
                self.apis[slug] = routes
        return routes

    def clear(self):
        self.__init__()


def _load_routes(slug: str) -> _ApiRoutes | None:
    api = ProviderApi.objects.filter(slug=slug, enabled=True).first()
    if api is None:
        return None
    by_path: dict[str, list[Endpoint]] = {}
    for endpoint in Endpoint.objects.filter(api=api, enabled=True).order_by("path", "method"):
        endpoint.api = api
        by_path.setdefault(endpoint.path, []).append(endpoint)
    polled = {
        endpoint.poll_endpoint_id
        for endpoints in by_path.values()
        for endpoint in endpoints
        if endpoint.poll_endpoint_id
    }
    templates = [path for path in by_path if "{" in path]
    return _ApiRoutes(
        api=api,
        by_path=by_path,
        templates=templates,
        polled_ids=frozenset(polled),
        multi_segment={
            template: frozenset().union(
                *(
                    multi_segment_placeholders(endpoint.path_params)
                    for endpoint in by_path[template]
                )
            )
            for template in templates
        },
    )


_route_cache = _RouteCache()


def route_cache_clear() -> None:
    _route_cache.clear()


def endpoint_resolve(*, api_slug: str, path: str, method: str | None = None) -> ResolvedEndpoint:
    """The enabled endpoint of an enabled API for a catalog path or a concrete path.

    A literal catalog path wins over templates; among templates the one with the fewest
    multi-segment placeholders, then the fewest placeholders, then the most literal characters
    wins. A given ``method`` comes first: paths
    and templates without it give way to a template with it (GitHub's
    ``/teams/{id}/repos/{org}/{repo}`` has only PUT, ``/teams/{id}/repos/{owner}/{repo}`` GET
    and DELETE). NotFound names the slug or the path; InvalidRequest lists the methods when the
    path has several and ``method`` is not given.
    """
    routes = _route_cache.routes(api_slug)
    if routes is None:
        raise NotFound(f"Unknown API: {api_slug}")
    candidates = routes.by_path.get(path, [])
    path_params: dict[str, str] = {}
    if not _has_method(candidates, method):
        in_templates, values = _template_candidates(routes, path, method)
        if not candidates or _has_method(in_templates, method):
            candidates, path_params = in_templates, values
    if not candidates:
        hint = "; send query parameters in query, not in the path" if "?" in path else ""
        raise NotFound(f"No endpoint {path} in API {api_slug}{hint}")
    methods = sorted(endpoint.method for endpoint in candidates)
    if method:
        candidates = [ep for ep in candidates if ep.method == method.upper()]
        if not candidates:
            offered = ", ".join(_methods_offered(routes, path))
            raise NotFound(f"No {method.upper()} {path} in API {api_slug}; it has {offered}")
    elif len(candidates) > 1:
        raise InvalidRequest(
            f"{path} in API {api_slug} has several methods ({', '.join(methods)}); "
            "send method to choose one"
        )
    endpoint = candidates[0]
    return ResolvedEndpoint(
        endpoint=endpoint, path_params=path_params, polled=endpoint.pk in routes.polled_ids
    )


def _template_candidates(
    routes: _ApiRoutes, path: str, method: str | None
) -> tuple[list[Endpoint], dict[str, str]]:
    """The endpoints of the most specific template that ``path`` fits, preferring templates
    that have ``method``; with the placeholder values."""
    best_key, best_template, best_values = None, None, {}
    for template in routes.templates:
        values = routes.match(template, path)
        if values is None:
            continue
        lacks_method = not _has_method(routes.by_path[template], method)
        # a placeholder that spans segments fits more paths than one that takes a single segment
        spans = len(routes.multi_segment[template])
        key = (lacks_method, spans, len(values), -template_literal_length(template), template)
        if best_key is None or key < best_key:
            best_key, best_template, best_values = key, template, values
    if best_template is None:
        return [], {}
    return routes.by_path[best_template], best_values


def _methods_offered(routes: _ApiRoutes, path: str) -> list[str]:
    """Every method of the catalog path and of the templates that ``path`` fits."""
    endpoints = list(routes.by_path.get(path, []))
    for template in routes.templates:
        if template != path and routes.match(template, path) is not None:
            endpoints.extend(routes.by_path[template])
    return sorted({endpoint.method for endpoint in endpoints})


def _has_method(endpoints: list[Endpoint], method: str | None) -> bool:
    """Whether ``endpoints`` answer ``method`` (any of them, when no method is asked for)."""
    if not method:
        return bool(endpoints)
    return any(endpoint.method == method.upper() for endpoint in endpoints)


# --- list-endpoints ------------------------------------------------------------------------------


def catalog_list_page_json(
    *, limit: int, offset: int, verified: bool | None = None, is_payable: bool | None = None
) -> bytes:
    """The whole list-endpoints answer as JSON bytes, cached per catalog version.

    A 500-API page of the corpus holds ~14k endpoints (~17 MB). The parameter columns are read
    as JSON text and spliced into the answer as they are: decoding and re-encoding them was most
    of the cost, and DRF serializers would take seconds (EndpointListOutputSerializer documents
    the shape).
    """
    version = catalog_version_current()
    cache_key = f"catalog:list:v{version}:{limit}:{offset}:{verified}:{is_payable}"
    body = cache.get(cache_key)
    if body is None:
        body = _list_page_json(limit=limit, offset=offset, verified=verified, is_payable=is_payable)
        cache.set(cache_key, body, timeout=LIST_CACHE_SECONDS)
    return body


def _list_page_json(
    *, limit: int, offset: int, verified: bool | None, is_payable: bool | None
) -> bytes:
    """One page of enabled APIs (ordered by slug) that have at least one endpoint to show."""
    endpoint_filter = Q(enabled=True)
    apis = ProviderApi.objects.filter(enabled=True)
    if verified is not None:
        endpoint_filter &= Q(verified=verified)
        apis = apis.filter(verified=verified)
    if is_payable is not None:
        endpoint_filter &= Q(is_payable=is_payable)
    apis = apis.filter(Exists(Endpoint.objects.filter(endpoint_filter, api=OuterRef("pk"))))
    total = apis.count()
    rows = list(
        apis.order_by("slug", "id").values(
            "id", "name", "slug", "description", "base_url", "verified", "category", "docs_url"
        )[offset : offset + limit]
    )
    endpoint_rows = (
        Endpoint.objects.filter(endpoint_filter, api_id__in=[row["id"] for row in rows])
        .order_by("api_id", "path", "method")
        .annotate(
            query_params_json=Cast("query_params", TextField()),
            body_params_json=Cast("body_params", TextField()),
        )
        .values_list(
            "api_id",
            "path",
            "method",
            "summary",
            "description",
            "price_kind",
            "price_micros",
            "is_payable",
            "verified",
            "docs_url",
            "query_params_json",
            "body_params_json",
        )
    )
    docs_by_api = {row["id"]: row["docs_url"] for row in rows}
    by_api: dict[int, list[str]] = {row["id"]: [] for row in rows}
    total_endpoints = 0
    for (
        api_id,
        path,
        method,
        summary,
        description,
        price_kind,
        price_micros,
        payable,
        endpoint_verified,
        docs_url,
        query_params_json,
        body_params_json,
    ) in endpoint_rows:
        head = _json(
            {
                "path": path,
                "method": method,
                "description": endpoint_brief(summary, description),
                "price": prices.price_label(kind=price_kind, micros=price_micros),
                "priceUnit": prices.price_unit(kind=price_kind),
                "isPayable": payable,
                "verified": endpoint_verified,
                "docsUrl": docs_url or docs_by_api[api_id],
            }
        )
        by_api[api_id].append(
            f'{head[:-1]},"queryParams":{query_params_json},"bodyParams":{body_params_json}}}'
        )
        total_endpoints += 1
    apis_json = []
    for row in rows:
        item = {
            "name": row["name"],
            "slug": row["slug"],
            "description": row["description"],
            "baseUrl": row["base_url"],
            "verified": row["verified"],
        }
        if row["category"]:
            item["category"] = row["category"]
        apis_json.append(f'{_json(item)[:-1]},"endpoints":[{",".join(by_api[row["id"]])}]}}')
    pagination = {"limit": limit, "offset": offset, "hasMore": offset + len(rows) < total}
    return (
        f'{{"success":true,"apis":[{",".join(apis_json)}],"count":{len(rows)},'
        f'"totalEndpoints":{total_endpoints},"pagination":{_json(pagination)}}}'
    ).encode()


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- The dashboard's catalog browser -----------------------------------------------------------


def provider_apis_to_browse(*, verified: bool | None = None) -> QuerySet[ProviderApi]:
    """What list-endpoints lists, for people: enabled APIs with at least one enabled endpoint,
    by name, each annotated with ``endpoint_count`` (its enabled endpoints)."""
    apis = ProviderApi.objects.filter(enabled=True)
    if verified is not None:
        apis = apis.filter(verified=verified)
    return (
        apis.annotate(endpoint_count=Count("endpoints", filter=Q(endpoints__enabled=True)))
        .filter(endpoint_count__gt=0)
        .order_by(Lower("name"), "slug")
    )


def provider_api_to_browse(*, slug: str) -> tuple[ProviderApi, list[Endpoint]]:
    """An enabled API and its enabled endpoints (by path, then method); NotFound otherwise, so a
    disabled API looks exactly like one that does not exist."""
    api = ProviderApi.objects.filter(slug=slug, enabled=True).first()
    if api is None:
        raise NotFound(f"Unknown API: {slug}")
    return api, list(api.endpoints.filter(enabled=True).order_by("path", "method"))


def endpoint_price_texts(*, endpoint_ids: list[int]) -> dict[int, str]:
    """Each endpoint's price for people ("$0.0025 per result"): search answers carry the amount
    only, without the unit it is for."""
    rows = Endpoint.objects.filter(pk__in=endpoint_ids).values_list(
        "id", "price_kind", "price_micros"
    )
    return {pk: prices.price_text(kind=kind, micros=micros) for pk, kind, micros in rows}


# --- details and integrate ------------------------------------------------------------------------


def endpoint_details(*, api_slug: str, path: str, method: str | None = None) -> dict:
    """The details answer: the API, the endpoint with all its parameters, and how to call it."""
    resolved = endpoint_resolve(api_slug=api_slug, path=path, method=method)
    endpoint, api = resolved.endpoint, resolved.api
    poll = endpoint.poll_endpoint if endpoint.poll_endpoint_id else None
    return {
        "success": True,
        "api": {
            "name": api.name,
            "slug": api.slug,
            "description": api.description,
            "baseUrl": api.base_url,
            "verified": api.verified,
        },
        "endpoint": {
            "path": endpoint.path,
            "method": endpoint.method,
            "description": endpoint.description or endpoint.summary,
            "price": prices.endpoint_price_label(endpoint),
            "priceUnit": prices.price_unit(kind=endpoint.price_kind),
            "priceDetail": prices.endpoint_price_detail(endpoint),
            "isPayable": endpoint.is_payable,
            "verified": endpoint.verified,
            "docsUrl": endpoint.docs_url or api.docs_url,
            "bodyType": endpoint.body_type,
            "pathParams": endpoint.path_params,
            "queryParams": endpoint.query_params,
            "bodyParams": endpoint.body_params,
            "requirements": requirements_described(endpoint.requirements),
            "paginationParams": endpoint.pagination_params,
            "pollEndpoint": (
                {"method": poll.method, "path": poll.path} if poll and poll.enabled else None
            ),
        },
        "usage": {
            "runApi": snippets.run_api_text(
                endpoint,
                resolved.path_params,
                with_method=run_needs_method(endpoint, resolved.path_params),
            ),
            **(
                {"x402": snippets.rail_url(settings.X402_URL, api.slug, endpoint.path)}
                if snippets.rail_payable(endpoint)
                else {}
            ),
        },
    }


def run_needs_method(endpoint: Endpoint, path_values: dict[str, str]) -> bool:
    """Whether a /v1/run of the endpoint's example path must name the method: without it, run
    would ask which of the path's methods (Lusha's GET and POST /v2/person) or take the path for
    another template's endpoint."""
    path = snippets.fill_path(endpoint, path_values)
    try:
        resolved = endpoint_resolve(api_slug=endpoint.api.slug, path=path)
    except (InvalidRequest, NotFound):
        return True
    return resolved.endpoint.pk != endpoint.pk


def endpoint_integration(
    *, api_slug: str, path: str, format: str, method: str | None = None
) -> dict:
    """The integrate answer: code calling the endpoint in one format, or every format."""
    resolved = endpoint_resolve(api_slug=api_slug, path=path, method=method)
    endpoint, api = resolved.endpoint, resolved.api
    payable = snippets.rail_payable(endpoint)
    if format == "all":
        formats = [
            name for name in snippets.FORMATS if payable or name not in snippets.RAIL_FORMATS
        ]
    elif format in snippets.RAIL_FORMATS and not payable:
        raise InvalidRequest(
            f"{endpoint.method} {endpoint.path} is not payable on the pay-per-call rails here; "
            "use gw-sdk, run-api or curl"
        )
    else:
        formats = [format]
    with_method = run_needs_method(endpoint, resolved.path_params)
    return {
        "success": True,
        "api": {"name": api.name, "slug": api.slug},
        "endpoint": {
            "path": endpoint.path,
            "method": endpoint.method,
            "price": prices.endpoint_price_label(endpoint),
            "priceUnit": prices.price_unit(kind=endpoint.price_kind),
        },
        "format": format,
        "snippets": {
            name: snippets.snippet(name, endpoint, resolved.path_params, with_method=with_method)
            for name in formats
        },
        "setup": snippets.setup_commands(),
    }


# --- search --------------------------------------------------------------------------------------


def endpoint_search(*, prompt: str, limit: int) -> list[dict]:
    """The ``limit`` endpoints that best answer ``prompt``, grouped by API: APIs ordered by their
    best endpoint, endpoints by score. Only enabled endpoints of enabled APIs are indexed."""
    hits = search_index_current().search(prompt, limit=limit)
    return search_results_group(hits)


def search_results_group(hits: list[tuple[IndexedEndpoint, float]]) -> list[dict]:
    """Provider API records with their endpoint records, in the order of ``hits`` (best first)."""
    by_api: dict[int, dict] = {}
    for endpoint, score in hits:
        api = endpoint.api
        record = by_api.get(api.id)
        if record is None:
            record = by_api[api.id] = {
                "id": str(api.id),
                "name": api.name,
                "slug": api.slug,
                "baseUrl": api.base_url,
                "verified": api.verified,
                "endpoints": [],
            }
        if snippets.rail_payable(endpoint) and "payableBaseUrl" not in record:
            record["payableBaseUrl"] = snippets.rail_url(settings.X402_URL, api.slug, "")
        record["endpoints"].append(
            {
                "id": str(endpoint.id),
                "path": endpoint.path,
                "method": endpoint.method,
                "description": text_brief(endpoint.description),
                "price": endpoint.price,
                "isPayable": endpoint.is_payable,
                "verified": endpoint.verified,
                "score": score,
            }
        )
    return list(by_api.values())
