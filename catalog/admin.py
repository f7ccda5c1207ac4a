"""Curating the catalog. Every save and bulk action goes through catalog.services, which marks
the operator's choices (so imports keep them) and bumps the catalog version."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Count
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from catalog import prices
from catalog.forms import (
    ENDPOINT_PRICE_FORM_FIELDS,
    EndpointAdminForm,
    OpenApiImportForm,
    ProviderApiAdminForm,
    endpoint_fields_changed,
)
from catalog.models import Endpoint, ProviderApi
from catalog.services import (
    ImportSummary,
    endpoint_save,
    endpoints_set_enabled,
    endpoints_set_verified,
    openapi_content_import,
    openapi_import,
    provider_api_save,
    provider_apis_set_enabled,
    provider_apis_set_verified,
)

INLINE_ENDPOINTS = 50
URL_FIELDS_ASSUME_HTTPS = {models.URLField: {"assume_scheme": "https"}}
MESSAGES_SHOWN = 20


class EndpointInline(admin.TabularInline):
    """The first endpoints, read-only: an imported API can have hundreds, which the Endpoint
    list (linked above the inline) pages, filters and edits."""

    model = Endpoint
    fk_name = "api"
    fields = ["http_method", "path", "price", *Endpoint.CURATION_FIELDS]
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    show_change_link = True
    verbose_name_plural = f"Endpoints (the first {INLINE_ENDPOINTS} by path)"

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        object_id = (
            request.resolver_match.kwargs.get("object_id") if request.resolver_match else None
        )
        if not object_id or not str(object_id).isdigit():
            return queryset.none()
        first = Endpoint.objects.filter(api_id=object_id).order_by("path", "method")
        ids = list(first.values_list("pk", flat=True)[:INLINE_ENDPOINTS])
        return queryset.filter(pk__in=ids).order_by("path", "method")

    @admin.display(description="method")
    def http_method(self, endpoint):
        return endpoint.method

    @admin.display(description="price")
    def price(self, endpoint):
        return _price_short(endpoint)


@admin.register(ProviderApi)
class ProviderApiAdmin(admin.ModelAdmin):
    form = ProviderApiAdminForm
    formfield_overrides = URL_FIELDS_ASSUME_HTTPS
    list_display = [
        "slug",
        "name",
        "category",
        "owner",
        *ProviderApi.CURATION_FIELDS,
        "endpoint_count",
        "has_secret",
        "updated_at",
    ]
    list_filter = [*ProviderApi.CURATION_FIELDS, "category", "owner", "upstream_auth_type"]
    search_fields = ["slug", "name", "description", "source"]
    autocomplete_fields = ["owner"]
    list_select_related = ["owner"]
    readonly_fields = [
        "secret_status",
        "endpoints_link",
        "source",
        *ProviderApi.OPERATOR_MARKS,
        "created_at",
        "updated_at",
    ]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "category", "owner", "endpoints_link"]}),
        ("Addresses", {"fields": ["base_url", "sandbox_base_url", "docs_url", "timeout_seconds"]}),
        ("Curation", {"fields": list(ProviderApi.CURATION_FIELDS)}),
        (
            "Upstream authentication",
            {
                "fields": [
                    "upstream_auth_type",
                    "upstream_auth_name",
                    "secret_status",
                    "upstream_secret",
                    "clear_upstream_secret",
                ]
            },
        ),
        (
            "Provenance",
            {
                "classes": ["collapse"],
                "fields": ["source", *ProviderApi.OPERATOR_MARKS, "created_at", "updated_at"],
            },
        ),
    ]
    inlines = [EndpointInline]
    actions = ["mark_verified", "unverify", "enable", "disable"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(endpoint_total=Count("endpoints"))

    def has_delete_permission(self, request, obj=None):
        # Usage history points at APIs and endpoints: disable them instead.
        return False

    @admin.display(description="endpoints", ordering="endpoint_total")
    def endpoint_count(self, api):
        return api.endpoint_total

    @admin.display(description="secret", boolean=True)
    def has_secret(self, api):
        return bool(api.upstream_secret_encrypted)

    @admin.display(description="stored secret")
    def secret_status(self, api):
        return "set (write-only)" if api.upstream_secret_encrypted else "none"

    @admin.display(description="endpoints")
    def endpoints_link(self, api):
        if not api.pk:
            return "-"
        url = reverse("admin:catalog_endpoint_changelist") + f"?api__id__exact={api.pk}"
        return format_html(
            '<a href="{}">All {} endpoints of {}</a>', url, api.endpoints.count(), api.slug
        )

    def save_model(self, request, obj, form, change):
        provider_api_save(
            api=obj,
            changed_fields=form.changed_data,
            upstream_secret=form.cleaned_data.get("upstream_secret") or "",
            clear_upstream_secret=form.cleaned_data.get("clear_upstream_secret", False),
        )

    @admin.action(description="Mark the selected APIs verified")
    def mark_verified(self, request, queryset):
        count = provider_apis_set_verified(api_ids=_ids(queryset), verified=True)
        self.message_user(request, f"{count} APIs marked verified.", messages.SUCCESS)

    @admin.action(description="Unverify the selected APIs")
    def unverify(self, request, queryset):
        count = provider_apis_set_verified(api_ids=_ids(queryset), verified=False)
        self.message_user(request, f"{count} APIs unverified.", messages.SUCCESS)

    @admin.action(description="Enable the selected APIs")
    def enable(self, request, queryset):
        count = provider_apis_set_enabled(api_ids=_ids(queryset), enabled=True)
        self.message_user(request, f"{count} APIs enabled.", messages.SUCCESS)

    @admin.action(description="Disable the selected APIs (hidden from discovery and run)")
    def disable(self, request, queryset):
        count = provider_apis_set_enabled(api_ids=_ids(queryset), enabled=False)
        self.message_user(request, f"{count} APIs disabled.", messages.SUCCESS)

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_view)
        return [path("import/", view, name="catalog_providerapi_import"), *super().get_urls()]

    def import_view(self, request):
        if not self.has_add_permission(request):
            raise PermissionDenied
        posted = request.method == "POST"
        form = OpenApiImportForm(
            request.POST if posted else None, request.FILES if posted else None
        )
        if posted and form.is_valid():
            data = form.cleaned_data
            if data["document"]:
                summary = openapi_content_import(
                    content=data["document"].read(),
                    name=data["document"].name,
                    slug=data["slug"],
                    default_price_micros=data["price_usd"],
                    verify=data["verify"],
                    replace=data["replace"],
                )
            else:
                summary = openapi_import(
                    locations=[data["url"]],
                    slug=data["slug"],
                    default_price_micros=data["price_usd"],
                    verify=data["verify"],
                    replace=data["replace"],
                )
            _report(request, summary)
            if summary.documents:
                return redirect("admin:catalog_providerapi_changelist")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Import OpenAPI document",
            "has_view_permission": True,
            "form": form,
        }
        return TemplateResponse(request, "admin/catalog/providerapi/import_openapi.html", context)


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    form = EndpointAdminForm
    formfield_overrides = URL_FIELDS_ASSUME_HTTPS
    list_display = [
        "path",
        "http_method",
        "api",
        "price",
        *Endpoint.CURATION_FIELDS,
        "price_set_by_operator",
    ]
    list_display_links = ["path"]
    list_editable = list(Endpoint.CURATION_FIELDS)
    list_filter = [
        *Endpoint.CURATION_FIELDS,
        "price_kind",
        "method",
        "api__category",
        ("api__owner", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["path", "summary", "use_cases", "operation_id", "api__slug"]
    list_select_related = ["api"]
    list_per_page = 100
    autocomplete_fields = ["api", "poll_endpoint"]
    readonly_fields = [*Endpoint.OPERATOR_MARKS, "created_at", "updated_at"]
    fieldsets = [
        (None, {"fields": [*Endpoint.IDENTITY_FIELDS, *Endpoint.DESCRIPTION_FIELDS]}),
        ("Curation", {"fields": list(Endpoint.CURATION_FIELDS)}),
        (
            "Price",
            {
                "description": "Prices are in USD; they are stored in micro-dollars.",
                "fields": list(ENDPOINT_PRICE_FORM_FIELDS),
            },
        ),
        (
            "Request",
            {
                "classes": ["collapse"],
                "fields": [*Endpoint.REQUEST_FIELDS, "poll_endpoint"],
            },
        ),
        ("Provenance", {"classes": ["collapse"], "fields": readonly_fields}),
    ]
    actions = ["mark_verified", "unverify", "enable", "disable"]

    def get_readonly_fields(self, request, obj=None):
        # The import finds an endpoint by api, method and path: they stay as imported.
        if obj is not None:
            return [*Endpoint.IDENTITY_FIELDS, *self.readonly_fields]
        return self.readonly_fields

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="method", ordering="method")
    def http_method(self, endpoint):
        return endpoint.method

    @admin.display(description="price", ordering="price_micros")
    def price(self, endpoint):
        return _price_short(endpoint)

    def save_model(self, request, obj, form, change):
        endpoint_save(endpoint=obj, changed_fields=endpoint_fields_changed(form))

    @admin.action(description="Mark the selected endpoints verified")
    def mark_verified(self, request, queryset):
        count = endpoints_set_verified(endpoint_ids=_ids(queryset), verified=True)
        self.message_user(request, f"{count} endpoints marked verified.", messages.SUCCESS)

    @admin.action(description="Unverify the selected endpoints")
    def unverify(self, request, queryset):
        count = endpoints_set_verified(endpoint_ids=_ids(queryset), verified=False)
        self.message_user(request, f"{count} endpoints unverified.", messages.SUCCESS)

    @admin.action(description="Enable the selected endpoints")
    def enable(self, request, queryset):
        count = endpoints_set_enabled(endpoint_ids=_ids(queryset), enabled=True)
        self.message_user(request, f"{count} endpoints enabled.", messages.SUCCESS)

    @admin.action(description="Disable the selected endpoints")
    def disable(self, request, queryset):
        count = endpoints_set_enabled(endpoint_ids=_ids(queryset), enabled=False)
        self.message_user(request, f"{count} endpoints disabled.", messages.SUCCESS)


def _price_short(endpoint) -> str:
    """ "$0.01 / call", "$0.0025 / result", "free" or "dynamic"; the full rule is on the page."""
    if endpoint.price_kind == Endpoint.PriceKind.FREE:
        return "free"
    label = prices.endpoint_price_label(endpoint)
    if label == "dynamic":
        return label
    return f"{label} / {prices.price_unit(kind=endpoint.price_kind)}"


def _ids(queryset) -> list[int]:
    return list(queryset.values_list("pk", flat=True))


def _report(request, summary: ImportSummary) -> None:
    level = messages.SUCCESS if summary.documents else messages.ERROR
    messages.add_message(request, level, summary.line)
    for location, error in summary.errors[:MESSAGES_SHOWN]:
        messages.error(request, f"Not imported: {location}: {error}")
    warnings = [(r.source, w) for r in summary.documents for w in r.warnings]
    for source, warning in warnings[:MESSAGES_SHOWN]:
        messages.warning(request, f"{source}: {warning}")
    if len(warnings) > MESSAGES_SHOWN:
        messages.warning(request, f"…and {len(warnings) - MESSAGES_SHOWN} more warnings")
