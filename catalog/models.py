from django.db import models
from django.db.models import Q

from catalog.texts import USE_CASE_CHARS, USE_CASES_MAX, endpoint_brief
from gateway.models import Organization


class CatalogVersion(models.Model):
    """A single row whose counter moves on every catalog edit.

    The search index and the catalog caches compare it with the version they were built from.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    version = models.PositiveBigIntegerField(default=0)
    changed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(id=1), name="catalog_version_singleton")]

    def __str__(self):
        return f"catalog version {self.version}"


class ProviderApi(models.Model):
    """A provider's API as the catalog offers it (the contract's "Provider API record").

    ``upstream_secret_encrypted`` holds the credential the gateway presents to the provider,
    encrypted with settings.CATALOG_SECRET_KEY; it is never shown or returned after saving.
    """

    class AuthType(models.TextChoices):
        NONE = "none", "None"
        BEARER = "bearer", "Authorization: Bearer <secret>"
        HEADER = "header", "A named header"
        QUERY = "query", "A named query parameter"

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    category = models.CharField(max_length=60, blank=True, db_index=True)
    base_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="The provider's own address; empty when the document gave none (run refuses "
        "such an API until the operator sets it)",
    )
    sandbox_base_url = models.URLField(
        max_length=500, blank=True, help_text="What test keys call; empty means no sandbox"
    )
    docs_url = models.URLField(max_length=500, blank=True)
    owner = models.ForeignKey(
        Organization,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="provider_apis",
        help_text="The provider organization that is paid for calls",
    )
    verified = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)
    upstream_auth_type = models.CharField(
        max_length=10, choices=AuthType.choices, default=AuthType.NONE
    )
    upstream_auth_name = models.CharField(
        max_length=100, blank=True, help_text="Header or query parameter name"
    )
    upstream_secret_encrypted = models.TextField(blank=True, editable=False)
    timeout_seconds = models.PositiveSmallIntegerField(default=30)
    source = models.CharField(
        max_length=500, blank=True, help_text="The document this API was imported from"
    )
    verified_by_operator = models.BooleanField(
        default=False, editable=False, help_text="Set by hand; imports keep it"
    )
    enabled_by_operator = models.BooleanField(
        default=False, editable=False, help_text="Set by hand; imports keep it"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # What the operator decides about the API.
    CURATION_FIELDS = ("verified", "enabled")
    # Each mark, set when the operator changes one of its fields, makes imports keep them.
    OPERATOR_MARKS = {"verified_by_operator": ("verified",), "enabled_by_operator": ("enabled",)}

    class Meta:
        verbose_name = "provider API"
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class Endpoint(models.Model):
    """One operation of a provider API, with its parameters and price.

    Prices are integer micro-dollars. ``fixed``: ``price_micros`` per call. ``free``: nothing.
    ``per_result``: ``price_micros`` per result item, the count read at ``result_count_path`` in
    the response and bounded by the request parameter ``result_bound_param`` (at most
    ``result_max``, and by the bound parameter's documented default when the request leaves it
    out). ``dynamic``: tokens from the response's ``usage`` at the per-million-token
    prices.
    """

    class PriceKind(models.TextChoices):
        FIXED = "fixed", "Fixed per call"
        FREE = "free", "Free"
        PER_RESULT = "per_result", "Per result"
        DYNAMIC = "dynamic", "Dynamic (per token)"

    class Method(models.TextChoices):
        GET = "GET"
        POST = "POST"
        PUT = "PUT"
        PATCH = "PATCH"
        DELETE = "DELETE"
        HEAD = "HEAD"
        OPTIONS = "OPTIONS"

    api = models.ForeignKey(ProviderApi, on_delete=models.CASCADE, related_name="endpoints")
    method = models.CharField(max_length=7, choices=Method.choices)
    path = models.CharField(max_length=500)
    operation_id = models.CharField(max_length=200, blank=True)
    summary = models.CharField(max_length=500, blank=True)
    description = models.TextField(blank=True)
    use_cases = models.TextField(
        blank=True,
        help_text=f"Needs this endpoint answers, as users would type them, one per line: at most "
        f"{USE_CASES_MAX} lines of {USE_CASE_CHARS} characters (x-gateway-use-case); search "
        "matches needs against them",
    )
    docs_url = models.URLField(max_length=500, blank=True)
    body_type = models.CharField(max_length=20, blank=True, help_text="object, array or empty")
    body_content_type = models.CharField(
        max_length=100,
        blank=True,
        help_text="How the provider takes the body: application/json, "
        "application/x-www-form-urlencoded or multipart/form-data",
    )
    # Parameter records: [{"name", "type", "required", "description", ...bounds}]
    path_params = models.JSONField(default=list, blank=True)
    query_params = models.JSONField(default=list, blank=True)
    body_params = models.JSONField(default=list, blank=True)
    # Rules that span parameters (catalog.requirements): [{"anyOf": [["domain"], ["company"]]}]
    requirements = models.JSONField(
        default=list,
        blank=True,
        help_text='Rules that span parameters, such as [{"anyOf": [["domain"], ["company"]]}]',
    )
    verified = models.BooleanField(default=False)
    is_payable = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)

    price_kind = models.CharField(max_length=10, choices=PriceKind.choices, default=PriceKind.FIXED)
    price_micros = models.PositiveBigIntegerField(
        default=0, help_text="fixed: per call; per_result: per result item"
    )
    result_count_path = models.CharField(max_length=200, blank=True)
    result_bound_param = models.CharField(max_length=100, blank=True)
    result_max = models.PositiveIntegerField(null=True, blank=True)
    input_micros_per_mtok = models.PositiveBigIntegerField(default=0)
    output_micros_per_mtok = models.PositiveBigIntegerField(default=0)
    default_max_tokens = models.PositiveIntegerField(null=True, blank=True)

    pagination_params = models.JSONField(
        default=list, blank=True, help_text="Request parameters that page through one result"
    )
    poll_endpoint = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="start_endpoints",
        help_text="For an asynchronous job: the free endpoint that polls its result",
    )
    price_set_by_operator = models.BooleanField(
        default=False, editable=False, help_text="Price and payable set by hand; imports keep them"
    )
    verified_by_operator = models.BooleanField(
        default=False, editable=False, help_text="Set by hand; imports keep it"
    )
    enabled_by_operator = models.BooleanField(
        default=False,
        editable=False,
        help_text="Set by hand; imports keep it unless the operation left the document",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # An import finds the endpoint it updates by these.
    IDENTITY_FIELDS = ("api", "method", "path")
    # What the OpenAPI document says of the operation, which every import overwrites: what it
    # does and how to call it.
    DESCRIPTION_FIELDS = ("operation_id", "summary", "description", "use_cases", "docs_url")
    REQUEST_FIELDS = (
        "body_type",
        "body_content_type",
        "path_params",
        "query_params",
        "body_params",
        "requirements",
        "pagination_params",
    )
    DOCUMENT_FIELDS = DESCRIPTION_FIELDS + REQUEST_FIELDS
    PRICE_FIELDS = (
        "price_kind",
        "price_micros",
        "result_count_path",
        "result_bound_param",
        "result_max",
        "input_micros_per_mtok",
        "output_micros_per_mtok",
        "default_max_tokens",
    )
    # What the operator decides about the endpoint besides its price.
    CURATION_FIELDS = ("verified", "enabled", "is_payable")
    # Each mark, set when the operator changes one of its fields, makes imports keep them.
    OPERATOR_MARKS = {
        "price_set_by_operator": (*PRICE_FIELDS, "is_payable"),
        "verified_by_operator": ("verified",),
        "enabled_by_operator": ("enabled",),
    }
    # What catalog.search.endpoint_search_text_for reads of an endpoint and its API.
    SEARCH_TEXT_FIELDS = (
        "method",
        "path",
        "operation_id",
        "summary",
        "description",
        "use_cases",
        "path_params",
        "query_params",
        "body_params",
        "api__name",
        "api__slug",
        "api__description",
    )

    class Meta:
        ordering = ["api_id", "path", "method"]
        constraints = [
            models.UniqueConstraint(fields=["api", "method", "path"], name="unique_endpoint"),
            models.CheckConstraint(
                condition=Q(price_kind="per_result", result_count_path__gt="")
                | ~Q(price_kind="per_result"),
                name="per_result_price_names_its_count",
            ),
        ]

    def __str__(self):
        return f"{self.api.slug} {self.method} {self.path}"

    @property
    def brief(self) -> str:
        """What lists of endpoints show of it (catalog.texts.endpoint_brief)."""
        return endpoint_brief(self.summary, self.description)

    @property
    def takes_body(self) -> bool:
        """Whether a call sends a request body: POST, PUT and PATCH always, DELETE when its
        document describes one (Spotify's removal of playlist tracks), GET and others never."""
        return self.method in ("POST", "PUT", "PATCH") or (
            self.method == "DELETE" and bool(self.body_type)
        )


class EndpointEmbedding(models.Model):
    """The search index's stored view of one endpoint: the text that describes it
    (catalog.search.endpoint_search_text), the vectors ``model`` gave that text, the short text
    (catalog.search.endpoint_short_text) and the endpoint's use case (empty bytes without one), as
    float32 little-endian bytes, L2-normalised, and the SHA-256 of the three texts.

    A row whose hash or model differs from what the endpoint gives now is stale and is embedded
    again; an unchanged endpoint is never re-embedded.
    """

    endpoint = models.OneToOneField(
        Endpoint, primary_key=True, on_delete=models.CASCADE, related_name="embedding"
    )
    model = models.CharField(max_length=100)
    text = models.TextField()
    text_hash = models.CharField(max_length=64)
    vector = models.BinaryField()
    short_vector = models.BinaryField()
    use_case_vector = models.BinaryField(default=b"", blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"embedding of endpoint {self.endpoint_id} ({self.model})"
