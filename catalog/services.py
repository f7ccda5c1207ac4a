"""Catalog writes. Every one of them bumps the catalog version in its own transaction, so the
search index and the caches keyed on ``catalog_version_current()`` see the change."""

import hashlib
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import requests
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from catalog.crypto import secret_encrypt
from catalog.models import CatalogVersion, Endpoint, EndpointEmbedding, ProviderApi
from catalog.openapi import DocumentError, ParsedApi, ParsedEndpoint, document_load, document_parse
from catalog.use_cases import shipped_use_cases, use_cases_join
from gateway.errors import InvalidRequest
from gateway.models import Organization

logger = logging.getLogger("catalog.import")

DOCUMENT_SUFFIXES = (".json", ".yaml", ".yml")
MAX_DOCUMENT_BYTES = 25 * 1024 * 1024
URL_TIMEOUT_SECONDS = (5, 30)


# --- Catalog version ------------------------------------------------------------------------------


def catalog_version_bump() -> int:
    """Move the catalog version on; call it inside the transaction that changes the catalog."""
    updated = CatalogVersion.objects.filter(pk=1).update(version=F("version") + 1)
    if not updated:
        CatalogVersion.objects.get_or_create(pk=1, defaults={"version": 1})
    return CatalogVersion.objects.values_list("version", flat=True).get(pk=1)


# --- Operator edits (the admin) -------------------------------------------------------------------


def provider_api_save(
    *,
    api: ProviderApi,
    changed_fields: Iterable[str],
    upstream_secret: str = "",
    clear_upstream_secret: bool = False,
) -> ProviderApi:
    """Save an operator's edit of an API (new or existing) whose attributes are already set.

    A changed verified or enabled flag is marked as the operator's, so imports keep it. A new
    secret is encrypted; a blank one keeps the current secret.
    """
    _operator_marks_set(api, changed_fields)
    if clear_upstream_secret:
        api.upstream_secret_encrypted = ""
    elif upstream_secret:
        api.upstream_secret_encrypted = secret_encrypt(upstream_secret)
    with transaction.atomic():
        api.save()
        catalog_version_bump()
    # The API's name and description are part of every one of its endpoints' search texts.
    _embeddings_refresh_after_commit(api_ids=[api.pk])
    return api


def provider_api_secret_set(*, api: ProviderApi, secret: str) -> None:
    """Store (or with "" clear) the credential the gateway presents to the provider."""
    api.upstream_secret_encrypted = secret_encrypt(secret) if secret else ""
    with transaction.atomic():
        api.save(update_fields=["upstream_secret_encrypted", "updated_at"])
        catalog_version_bump()


def provider_apis_set_verified(*, api_ids: Iterable[int], verified: bool) -> int:
    with transaction.atomic():
        count = ProviderApi.objects.filter(pk__in=list(api_ids)).update(
            verified=verified, verified_by_operator=True
        )
        catalog_version_bump()
    return count


def provider_apis_set_enabled(*, api_ids: Iterable[int], enabled: bool) -> int:
    with transaction.atomic():
        count = ProviderApi.objects.filter(pk__in=list(api_ids)).update(
            enabled=enabled, enabled_by_operator=True
        )
        catalog_version_bump()
    return count


def endpoint_save(*, endpoint: Endpoint, changed_fields: Iterable[str]) -> Endpoint:
    """Save an operator's edit of an endpoint whose attributes are already set.

    Changing the price (any of its fields or the payable flag), verified or enabled marks it as
    the operator's, so imports keep it. ``changed_fields`` names the model's fields.
    """
    _operator_marks_set(endpoint, changed_fields)
    with transaction.atomic():
        endpoint.save()
        catalog_version_bump()
    _embeddings_refresh_after_commit(endpoint_ids=[endpoint.pk])
    return endpoint


def endpoints_set_verified(*, endpoint_ids: Iterable[int], verified: bool) -> int:
    with transaction.atomic():
        count = Endpoint.objects.filter(pk__in=list(endpoint_ids)).update(
            verified=verified, verified_by_operator=True
        )
        catalog_version_bump()
    return count


def endpoints_set_enabled(*, endpoint_ids: Iterable[int], enabled: bool) -> int:
    with transaction.atomic():
        count = Endpoint.objects.filter(pk__in=list(endpoint_ids)).update(
            enabled=enabled, enabled_by_operator=True
        )
        catalog_version_bump()
    return count


def _operator_marks_set(row: ProviderApi | Endpoint, changed_fields: Iterable[str]) -> None:
    """Mark as the operator's each group of fields (``OPERATOR_MARKS``) that the edit changed."""
    changed = set(changed_fields)
    for mark, fields in row.OPERATOR_MARKS.items():
        if changed.intersection(fields):
            setattr(row, mark, True)


# --- Search embeddings ----------------------------------------------------------------------------

EMBEDDING_CHUNK = 512


def endpoint_embeddings_refresh(
    *,
    api_ids: Iterable[int] | None = None,
    endpoint_ids: Iterable[int] | None = None,
    rebuild: bool = False,
    progress: bool = False,
) -> int:
    """Embed the endpoints whose search text changed (or every one with ``rebuild``) and store
    the vectors; returns how many were embedded. Without ``api_ids`` or ``endpoint_ids``, the
    whole catalog is looked at.

    Runs after the catalog write has committed, never inside it: the model takes some 30 ms an
    endpoint (two texts) on this machine's two cores. Each chunk is written in its own short
    transaction, and the catalog version moves once at the end so that every process reloads
    its search index.
    """
    from catalog.embeddings import model_name, texts_embed, vector_to_bytes
    from catalog.search import SearchTexts, endpoint_search_texts_for

    model = model_name()  # hashes the adapter file: once, not once per endpoint
    endpoints = Endpoint.objects.select_related("api").only(*Endpoint.SEARCH_TEXT_FIELDS)
    if api_ids is not None:
        endpoints = endpoints.filter(api_id__in=list(api_ids))
    if endpoint_ids is not None:
        endpoints = endpoints.filter(pk__in=list(endpoint_ids))
    stored = dict(
        EndpointEmbedding.objects.filter(model=model, endpoint__in=endpoints).values_list(
            "endpoint_id", "text_hash"
        )
    )
    stale: list[tuple[int, SearchTexts]] = []
    for endpoint in endpoints.order_by("pk").iterator(chunk_size=2000):
        texts = endpoint_search_texts_for(endpoint, endpoint.api)
        if rebuild or stored.get(endpoint.pk) != texts.hash:
            stale.append((endpoint.pk, texts))
    if not stale:
        return 0
    chunks = [stale[i : i + EMBEDDING_CHUNK] for i in range(0, len(stale), EMBEDDING_CHUNK)]
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(stale), unit="endpoint", desc="Embedding")
    for chunk in chunks:
        vectors = texts_embed([texts.full for _, texts in chunk])
        short_vectors = texts_embed([texts.short for _, texts in chunk])
        use_case_vectors = iter(_use_cases_embed([texts.use_cases for _, texts in chunk]))
        rows = [
            EndpointEmbedding(
                endpoint_id=endpoint_id,
                model=model,
                text=texts.full,
                text_hash=texts.hash,
                vector=vector_to_bytes(vector),
                short_vector=vector_to_bytes(short_vector),
                use_case_vector=(
                    vector_to_bytes(next(use_case_vectors)) if texts.use_cases else b""
                ),
            )
            for (endpoint_id, texts), vector, short_vector in zip(
                chunk, vectors, short_vectors, strict=True
            )
        ]
        with transaction.atomic():
            EndpointEmbedding.objects.bulk_create(
                rows,
                update_conflicts=True,
                unique_fields=["endpoint"],
                update_fields=[
                    "model",
                    "text",
                    "text_hash",
                    "vector",
                    "short_vector",
                    "use_case_vector",
                    "updated_at",
                ],
            )
        if progress:
            bar.update(len(chunk))
    if progress:
        bar.close()
    with transaction.atomic():
        catalog_version_bump()
    return len(stale)


def _use_cases_embed(use_cases: list[tuple[str, ...]]) -> list[np.ndarray]:
    """One vector for each endpoint that has use cases: the mean of their vectors, scaled back
    to unit length, so that it stands for what its wordings share and a dot product with it is
    still a cosine."""
    from catalog.embeddings import texts_embed

    lines = [line for endpoint in use_cases for line in endpoint]
    if not lines:
        return []
    ends = np.cumsum([len(endpoint) for endpoint in use_cases if endpoint])[:-1]
    means = [group.mean(axis=0) for group in np.split(texts_embed(lines), ends)]
    return [(mean / np.linalg.norm(mean)).astype(np.float32) for mean in means]


def _embeddings_refresh_after_commit(**scope) -> None:
    """Refresh embeddings once the write has committed (at once when no transaction is open; the
    admin wraps its saves in one). A failure leaves the endpoints findable by keywords only
    (``reindex_search`` repairs it) and never undoes the write."""

    def refresh() -> None:
        try:
            endpoint_embeddings_refresh(**scope)
        except Exception:
            logger.exception("Embedding changed endpoints failed; run `manage.py reindex_search`")

    transaction.on_commit(refresh)


def _embeddings_refresh_for(summary: "ImportSummary") -> None:
    slugs = [report.slug for report in summary.documents]
    if slugs:
        api_ids = ProviderApi.objects.filter(slug__in=slugs).values_list("pk", flat=True)
        _embeddings_refresh_after_commit(api_ids=list(api_ids))


# --- OpenAPI import -------------------------------------------------------------------------------


@dataclass
class DocumentReport:
    """What importing one document changed."""

    source: str
    slug: str = ""
    api_created: bool = False
    api_updated: bool = False
    endpoints_created: int = 0
    endpoints_updated: int = 0
    endpoints_unchanged: int = 0
    endpoints_disabled: int = 0
    endpoints_skipped: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class ImportSummary:
    """What an import run (one or more documents) changed, and the documents that failed."""

    documents: list[DocumentReport] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)

    def total(self, name: str) -> int:
        return sum(getattr(report, name) for report in self.documents)

    @property
    def line(self) -> str:
        apis_created = sum(report.api_created for report in self.documents)
        apis_updated = sum(report.api_updated for report in self.documents)
        return (
            f"{len(self.documents)} documents imported, {len(self.errors)} failed; "
            f"APIs: {apis_created} created, {apis_updated} updated, "
            f"{len(self.documents) - apis_created - apis_updated} unchanged; "
            f"endpoints: {self.total('endpoints_created')} created, "
            f"{self.total('endpoints_updated')} updated, "
            f"{self.total('endpoints_unchanged')} unchanged, "
            f"{self.total('endpoints_disabled')} disabled, "
            f"{self.total('endpoints_skipped')} skipped"
        )


def openapi_import(
    *,
    locations: Iterable[str],
    slug: str = "",
    default_price_micros: int,
    verify: bool = False,
    replace: bool = False,
) -> ImportSummary:
    """Import files, directory trees and http(s) URLs. A failing document is reported in the
    summary and does not stop the others. ``replace`` lets a document whose slug is derived take
    over an API that another document created (see openapi_document_import)."""
    summary = ImportSummary()
    sources: list[tuple[str, str]] = []  # (location, slug derived from its place in a tree)
    for location in locations:
        if re.match(r"^https?://", location):
            sources.append((location, ""))
            continue
        path = Path(location)
        if path.is_dir():
            sources.extend(_tree_sources(path))
        elif path.is_file():
            sources.append((str(path), ""))
        else:
            summary.errors.append((location, "no such file, directory or http(s) URL"))
    if slug and len(sources) > 1:
        raise InvalidRequest("--slug names one API: give it with a single document only")
    for location, tree_slug in sources:
        try:
            content, source_url = _read_source(location)
            report = openapi_document_import(
                document=document_load(content),
                source=location,
                source_url=source_url,
                slug=slug,
                derived_slug=tree_slug,
                default_price_micros=default_price_micros,
                verify=verify,
                replace=replace,
            )
        except DocumentError as error:
            summary.errors.append((location, str(error)))
            continue
        except Exception as error:  # one broken document must not stop a directory import
            logger.exception("Importing %s failed", location)
            summary.errors.append((location, f"unexpected {error.__class__.__name__}: {error}"))
            continue
        summary.documents.append(report)
    _embeddings_refresh_for(summary)
    return summary


def openapi_content_import(
    *,
    content: bytes,
    name: str,
    slug: str = "",
    default_price_micros: int,
    verify: bool = False,
    replace: bool = False,
) -> ImportSummary:
    """Import one uploaded document (the admin's import page)."""
    summary = ImportSummary()
    source = f"upload:{name}"
    try:
        report = openapi_document_import(
            document=document_load(content),
            source=source,
            slug=slug,
            default_price_micros=default_price_micros,
            verify=verify,
            replace=replace,
        )
    except DocumentError as error:
        summary.errors.append((name, str(error)))
    else:
        summary.documents.append(report)
    _embeddings_refresh_for(summary)
    return summary


def openapi_document_import(
    *,
    document: dict,
    source: str,
    default_price_micros: int,
    slug: str = "",
    derived_slug: str = "",
    source_url: str = "",
    verify: bool = False,
    replace: bool = False,
) -> DocumentReport:
    """Create or update one API and its endpoints from a parsed OpenAPI document.

    The API is found by slug (the x-gateway-api slug, else ``slug``, else ``derived_slug`` (the
    document's place in a directory tree), else the slugified title), so importing the same
    document again updates it in place. A slug the document or the operator names takes over the
    API of that slug whatever document created it. A derived one does not: it would let one
    import quietly overwrite an unrelated API that happens to slugify alike (a folder named
    ``youtube`` under another tree), so that document fails unless ``replace`` is given.
    Operations no longer in the document are disabled, not deleted (usage history points at
    them). Prices, payable, verified and enabled flags that the operator set by hand are kept.
    """
    parsed = document_parse(document, source_url=source_url)
    named_slug = parsed.slug or slug
    api_slug = named_slug or derived_slug or slug_from_text(parsed.title)
    if not api_slug:
        raise DocumentError(
            "no slug: set x-gateway-api.slug, pass --slug, or give the document an info.title"
        )
    if parsed.slug and slug_from_text(parsed.slug) != parsed.slug:
        raise DocumentError(
            f"x-gateway-api.slug {parsed.slug!r} is not a slug (lowercase letters, digits, -)"
        )
    if len(api_slug) > 100:
        raise DocumentError(f"slug {api_slug!r} is longer than 100 characters")
    report = DocumentReport(source=source, slug=api_slug, warnings=list(parsed.warnings))
    report.endpoints_skipped = parsed.skipped

    with transaction.atomic():
        owner = _owner_for(parsed.owner_slug) if parsed.owner_slug else None
        api = ProviderApi.objects.select_for_update().filter(slug=api_slug).first()
        report.api_created = api is None
        if api is None:
            api = ProviderApi(slug=api_slug)
        elif api.source and not _same_document(api.source, source):
            if not (named_slug or replace):
                raise DocumentError(
                    f"the slug {api_slug} belongs to the API imported from {api.source}: give "
                    "this document a slug of its own, or import it with replace to update that API"
                )
            report.warnings.append(f"replaces the API {api_slug} imported from {api.source}")
        values = _api_values(parsed, api_slug, owner, source)
        if report.api_created or not api.verified_by_operator:
            values["verified"] = bool(verify or parsed.verified)
        if parsed.auth_declared or report.api_created:
            values["upstream_auth_type"] = parsed.auth_type or "none"
            values["upstream_auth_name"] = parsed.auth_name
        api_changed = [name for name, value in values.items() if getattr(api, name) != value]
        for name in api_changed:
            setattr(api, name, values[name])
        if report.api_created:
            api.save()
        elif api_changed:
            api.save(update_fields=[*api_changed, "updated_at"])
            report.api_updated = True
        changed = report.api_created or report.api_updated
        changed |= _import_endpoints(api, parsed, report, default_price_micros, verify)
        if changed:
            catalog_version_bump()
    return report


def _same_document(previous: str, current: str) -> bool:
    """Whether two import sources name the same document. A local file counts as the same when
    its name and folder match, so a checkout or a corpus copied to another place still updates
    the APIs it created; URLs and uploads must match exactly."""
    if previous == current:
        return True
    local = [not re.match(r"^(https?|upload):", source) for source in (previous, current)]
    return all(local) and Path(previous).parts[-2:] == Path(current).parts[-2:]


def _api_values(parsed: ParsedApi, slug: str, owner, source: str) -> dict[str, Any]:
    values = {
        "name": (parsed.name or slug)[:200],
        "description": parsed.description,
        "category": parsed.category,
        "base_url": parsed.base_url,
        "docs_url": parsed.docs_url,
        "owner_id": owner.pk if owner else None,
        "source": source[:500],
        "sandbox_base_url": f"{settings.SANDBOX_BASE_URL}/{slug}" if parsed.sandbox else "",
    }
    if parsed.timeout_seconds is not None:
        values["timeout_seconds"] = parsed.timeout_seconds
    return values


def _import_endpoints(
    api: ProviderApi,
    parsed: ParsedApi,
    report: DocumentReport,
    default_price_micros: int,
    verify: bool,
) -> bool:
    existing = {(ep.method, ep.path): ep for ep in Endpoint.objects.filter(api=api)}
    to_create: list[Endpoint] = []
    to_update: dict[int, Endpoint] = {}
    update_fields: set[str] = set()
    for item in parsed.endpoints:
        values = _endpoint_values(item, parsed, default_price_micros, verify)
        values["use_cases"] = use_cases_join(
            item.use_cases or shipped_use_cases(api.slug, item.method, item.path)
        )
        endpoint = existing.get((item.method, item.path))
        if endpoint is None:
            to_create.append(Endpoint(api=api, method=item.method, path=item.path, **values))
            continue
        for mark, kept in Endpoint.OPERATOR_MARKS.items():
            if getattr(endpoint, mark):
                for name in kept:
                    values.pop(name)
        changed = [name for name, value in values.items() if getattr(endpoint, name) != value]
        if changed:
            for name in changed:
                setattr(endpoint, name, values[name])
            to_update[endpoint.pk] = endpoint
            update_fields.update(changed)
        else:
            report.endpoints_unchanged += 1

    in_document = {(item.method, item.path) for item in parsed.endpoints}
    removed = [
        endpoint.pk
        for key, endpoint in existing.items()
        if key not in in_document and endpoint.enabled
    ]
    if to_create:
        Endpoint.objects.bulk_create(to_create, batch_size=500)
    if to_update:
        now = timezone.now()  # bulk_update does not run auto_now
        for endpoint in to_update.values():
            endpoint.updated_at = now
        Endpoint.objects.bulk_update(
            list(to_update.values()), [*sorted(update_fields), "updated_at"], batch_size=200
        )
    if removed:
        # The operator's own enable/disable is forgotten: the document no longer offers it.
        Endpoint.objects.filter(pk__in=removed).update(
            enabled=False, enabled_by_operator=False, updated_at=timezone.now()
        )
    report.endpoints_created = len(to_create)
    report.endpoints_updated = len(to_update)
    report.endpoints_disabled = len(removed)
    polls_changed = _link_poll_endpoints(api, parsed)
    return bool(to_create or to_update or removed or polls_changed)


def _endpoint_values(
    item: ParsedEndpoint, parsed: ParsedApi, default_price_micros: int, verify: bool
) -> dict[str, Any]:
    values: dict[str, Any] = {name: getattr(item, name) for name in Endpoint.DOCUMENT_FIELDS}
    price = item.price
    if price is None:
        kind = Endpoint.PriceKind.FIXED if default_price_micros else Endpoint.PriceKind.FREE
        values.update(
            price_kind=kind,
            price_micros=default_price_micros,
            result_count_path="",
            result_bound_param="",
            result_max=None,
            input_micros_per_mtok=0,
            output_micros_per_mtok=0,
            default_max_tokens=None,
        )
    else:
        values.update(
            price_kind=price.kind,
            price_micros=price.price_micros,
            result_count_path=price.result_count_path,
            result_bound_param=price.result_bound_param,
            result_max=price.result_max,
            input_micros_per_mtok=price.input_micros_per_mtok,
            output_micros_per_mtok=price.output_micros_per_mtok,
            default_max_tokens=price.default_max_tokens,
        )
    values["is_payable"] = item.is_payable if item.is_payable is not None else True
    if verify:
        values["verified"] = True
    elif item.verified is not None:
        values["verified"] = item.verified
    else:
        values["verified"] = bool(parsed.verified)
    values["enabled"] = item.enabled if item.enabled is not None else True
    return values


def _link_poll_endpoints(api: ProviderApi, parsed: ParsedApi) -> bool:
    wanted = {(item.method, item.path): item.poll for item in parsed.endpoints}
    rows = list(Endpoint.objects.filter(api=api).only("pk", "method", "path", "poll_endpoint_id"))
    ids = {(row.method, row.path): row.pk for row in rows}
    changed = []
    for row in rows:
        poll = wanted.get((row.method, row.path))
        target = ids.get(poll) if poll else None
        if (row.method, row.path) in wanted and row.poll_endpoint_id != target:
            row.poll_endpoint_id = target
            changed.append(row)
    if changed:
        Endpoint.objects.bulk_update(changed, ["poll_endpoint"], batch_size=500)
    return bool(changed)


def _owner_for(slug: str) -> Organization:
    owner_slug = slug_from_text(slug)[:80]
    if not owner_slug:
        raise DocumentError(f"x-gateway-api.owner {slug!r} is not a slug")
    owner, _ = Organization.objects.get_or_create(
        slug=owner_slug, defaults={"name": owner_slug.replace("-", " ").title()}
    )
    return owner


def slug_from_text(text: str) -> str:
    """ "Hunter.io API v2" -> "hunter-io-api-v2" (dots become dashes, unlike django's slugify)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:100].strip("-")


def _tree_sources(root: Path) -> list[tuple[str, str]]:
    """Every document under ``root`` with a stable slug derived from its place in the tree:
    specs/lufthansa.com/public/1.0.json -> lufthansa-com-public (the version file is dropped)."""
    files = sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and path.suffix.lower() in DOCUMENT_SUFFIXES
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )
    sources: list[tuple[str, str]] = []
    used: set[str] = set()
    for path in files:
        parts = path.relative_to(root).parts
        named = parts[:-1] if len(parts) > 1 else (path.stem,)
        candidates = [
            slug_from_text("-".join(named)),
            slug_from_text("-".join([*named, path.stem])),
        ]
        slug = next((c for c in candidates if c and c not in used), "")
        if not slug:  # two files that slugify alike: a digest of the path keeps them apart
            digest = hashlib.sha256(str(path.relative_to(root)).encode()).hexdigest()[:8]
            slug = f"{candidates[0][:91]}-{digest}".strip("-")
        if len(slug) > 100:
            digest = hashlib.sha256(slug.encode()).hexdigest()[:8]
            slug = f"{slug[:91].strip('-')}-{digest}"
        used.add(slug)
        sources.append((str(path), slug))
    return sources


def _read_source(location: str) -> tuple[bytes, str]:
    """The bytes of a file or an http(s) URL, and the URL (relative servers resolve against it)."""
    if not re.match(r"^https?://", location):
        path = Path(location)
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise DocumentError(f"larger than {MAX_DOCUMENT_BYTES} bytes")
        return path.read_bytes(), ""
    try:
        response = requests.get(location, timeout=URL_TIMEOUT_SECONDS, stream=True)
    except requests.RequestException as error:
        raise DocumentError(f"cannot fetch: {error.__class__.__name__}: {error}") from None
    with response:
        if response.status_code != 200:
            raise DocumentError(f"fetching it answered HTTP {response.status_code}")
        chunks, size = [], 0
        for chunk in response.iter_content(chunk_size=65536):
            size += len(chunk)
            if size > MAX_DOCUMENT_BYTES:
                raise DocumentError(f"larger than {MAX_DOCUMENT_BYTES} bytes")
            chunks.append(chunk)
    return b"".join(chunks), location
