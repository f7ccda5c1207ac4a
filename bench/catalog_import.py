"""Import the whole OpenAPI corpus and time it, then time GET /v1/list-endpoints?limit=500, and
check that the /v1/run call details and snippets give for each endpoint resolves to it.

Runs on BENCH_DATABASE_URL when set (an existing PostgreSQL database, left in place), otherwise on
a throwaway database created on postgres@127.0.0.1 and dropped at the end. Prints figures; asserts
nothing. CORPUS_DIR overrides the corpus location.

    .venv/bin/python bench/catalog_import.py
"""

import os
import statistics
import time
from pathlib import Path

import harness
from harness import CORPUS_DIR

REQUESTS = 50


def main() -> None:
    harness.argument_parser(__doc__).parse_args()
    os.environ["RATE_LIMIT_ENABLED"] = "False"
    with harness.django_database(f"gw_catalog_bench_{os.getpid()}"):
        _run()


def _run() -> None:
    from django.conf import settings
    from django.test import Client
    from django.utils import timezone

    from catalog.models import Endpoint, EndpointEmbedding, ProviderApi
    from catalog.services import catalog_version_bump, openapi_import
    from gateway.money import usd_to_micros
    from gateway.services import api_key_create, user_get_or_create

    files = sum(1 for p in Path(CORPUS_DIR).rglob("*") if p.suffix in (".json", ".yaml", ".yml"))
    began = timezone.now()
    started = time.perf_counter()
    summary = openapi_import(
        locations=[CORPUS_DIR],
        default_price_micros=usd_to_micros(settings.CATALOG_DEFAULT_PRICE_USD),
    )
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    again = openapi_import(
        locations=[CORPUS_DIR],
        default_price_micros=usd_to_micros(settings.CATALOG_DEFAULT_PRICE_USD),
    )
    reimport_seconds = time.perf_counter() - started

    print(f"corpus: {CORPUS_DIR}")
    print(f"files: {files}  imported: {len(summary.documents)}  failed: {len(summary.errors)}")
    print(f"APIs: {ProviderApi.objects.count()}  endpoints: {Endpoint.objects.count()}")
    print(
        f"import: {seconds:.1f} s, including embedding "
        f"{EndpointEmbedding.objects.filter(updated_at__gte=began).count()} endpoints for search"
        f"  ({summary.line})"
    )
    print(f"re-import: {reimport_seconds:.1f} s  ({again.line})")

    user, _ = user_get_or_create(email="bench@example.com")
    _, secret = api_key_create(mode="live", user=user, name="bench")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}", HTTP_HOST="127.0.0.1")

    def timed(url: str) -> tuple[float, int]:
        started = time.perf_counter()
        response = client.get(url)
        elapsed = time.perf_counter() - started
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}: {response.content[:200]}")
        return elapsed * 1000, len(response.content)

    url = "/v1/list-endpoints?limit=500"
    uncached = []
    for _ in range(5):
        catalog_version_bump()  # what any catalog edit does: the cached page is stale
        uncached.append(timed(url)[0])
    warm = []
    size = 0
    for _ in range(REQUESTS):
        elapsed, size = timed(url)
        warm.append(elapsed)
    print(f"GET {url}: {size / 1e6:.1f} MB")
    print(
        f"  cached ({REQUESTS} requests): p50 {harness.percentile(warm, 50):.1f} ms  "
        f"p95 {harness.percentile(warm, 95):.1f} ms"
    )
    print(
        f"  uncached (5 requests after a catalog change): p50 {statistics.median(uncached):.0f} ms"
    )
    print(f"  cache: {settings.CACHES['default']['BACKEND'].rsplit('.', 1)[-1]}")
    _run_calls_resolve()


def _run_calls_resolve() -> None:
    """Resolve every endpoint's example run call (as /v1/details and /v1/integrate give it) as
    /v1/run does, and count where it leads."""
    from catalog import snippets
    from catalog.models import Endpoint
    from catalog.selectors import endpoint_resolve, run_needs_method
    from gateway.errors import ApiError

    outcomes: dict[str, list[str]] = {"itself": [], "twin": [], "refused": []}
    named = 0
    endpoints = Endpoint.objects.filter(enabled=True, api__enabled=True).select_related("api")
    for endpoint in endpoints.iterator(chunk_size=2000):
        call = snippets.run_request(
            endpoint, {}, with_method=run_needs_method(endpoint, path_values={})
        )
        named += "method" in call
        where = f"{endpoint.api.slug} {endpoint.method} {endpoint.path} -> {call['path']}"
        try:
            resolved = endpoint_resolve(
                api_slug=call["api"], path=call["path"], method=call.get("method")
            )
        except ApiError as error:
            outcomes["refused"].append(f"{where}: {error}")
            continue
        if resolved.endpoint.pk == endpoint.pk:
            outcomes["itself"].append(where)
        elif resolved.endpoint.method == endpoint.method:
            outcomes["twin"].append(f"{where} (as {resolved.endpoint.path})")
        else:
            outcomes["refused"].append(f"{where}: resolves to {resolved.endpoint.method}")
    total = sum(len(calls) for calls in outcomes.values())
    print(f"run calls of details and snippets ({total} endpoints, {named} naming the method):")
    print(f"  resolve to their endpoint: {len(outcomes['itself'])}")
    print(f"  resolve to another template with the same method: {len(outcomes['twin'])}")
    print(f"  refused or sent with another method: {len(outcomes['refused'])}")
    for line in (outcomes["refused"] + outcomes["twin"])[:5]:
        print(f"    {line}")


if __name__ == "__main__":
    main()
