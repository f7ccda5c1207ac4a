"""Admin forms: prices entered in USD (stored in micro-dollars), the write-only upstream secret,
and the OpenAPI import page."""

from django import forms
from django.conf import settings

from catalog.models import Endpoint, ProviderApi
from catalog.requirements import RequirementError, requirements_parse
from catalog.use_cases import UseCaseError, use_cases_clean, use_cases_join, use_cases_of
from gateway.money import micros_to_decimal_usd, usd_to_micros


def _url_field(help_text: str = "") -> forms.URLField:
    return forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text=help_text,
        widget=forms.URLInput(attrs={"class": "vURLField"}),
    )


class ProviderApiAdminForm(forms.ModelForm):
    base_url = _url_field(ProviderApi._meta.get_field("base_url").help_text)
    sandbox_base_url = _url_field(ProviderApi._meta.get_field("sandbox_base_url").help_text)
    docs_url = _url_field()
    upstream_secret = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Write-only: never shown again. Leave blank to keep the current secret.",
    )
    clear_upstream_secret = forms.BooleanField(required=False, help_text="Remove the stored secret")

    class Meta:
        model = ProviderApi
        fields = [
            "name",
            "slug",
            "description",
            "category",
            "owner",
            "base_url",
            "sandbox_base_url",
            "docs_url",
            *ProviderApi.CURATION_FIELDS,
            "upstream_auth_type",
            "upstream_auth_name",
            "timeout_seconds",
        ]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("upstream_secret") and cleaned.get("clear_upstream_secret"):
            self.add_error(
                "clear_upstream_secret", "Either give a new secret or clear it, not both"
            )
        if cleaned.get("upstream_auth_type") in ("header", "query") and not cleaned.get(
            "upstream_auth_name"
        ):
            self.add_error("upstream_auth_name", "A header or query parameter name is required")
        return cleaned


class UsdField(forms.CharField):
    """A dollar amount typed by a person ("0.01", "$2.20") -> micro-dollars."""

    def to_python(self, value):
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        try:
            micros = usd_to_micros(value)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        if micros < 0:
            raise forms.ValidationError("A price cannot be negative")
        return micros

    def prepare_value(self, value):
        return micros_to_decimal_usd(value) if isinstance(value, int) else value


# The endpoint's amounts are typed in USD and stored in micro-dollars: each model field and the
# form field that edits it.
ENDPOINT_USD_FIELDS = {
    "price_micros": "price_usd",
    "input_micros_per_mtok": "input_usd_per_mtok",
    "output_micros_per_mtok": "output_usd_per_mtok",
}
# The price as the admin edits it.
ENDPOINT_PRICE_FORM_FIELDS = tuple(
    ENDPOINT_USD_FIELDS.get(name, name) for name in Endpoint.PRICE_FIELDS
)


class EndpointAdminForm(forms.ModelForm):
    docs_url = _url_field()
    price_usd = UsdField(
        required=False,
        label="Price (USD)",
        help_text="fixed: per call; per result: per result item",
    )
    input_usd_per_mtok = UsdField(
        required=False, label="Input USD per million tokens", help_text="dynamic only"
    )
    output_usd_per_mtok = UsdField(
        required=False, label="Output USD per million tokens", help_text="dynamic only"
    )

    class Meta:
        model = Endpoint
        fields = [
            *Endpoint.IDENTITY_FIELDS,
            *Endpoint.DESCRIPTION_FIELDS,
            *Endpoint.CURATION_FIELDS,
            *(name for name in Endpoint.PRICE_FIELDS if name not in ENDPOINT_USD_FIELDS),
            *Endpoint.REQUEST_FIELDS,
            "poll_endpoint",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            for micros, usd in ENDPOINT_USD_FIELDS.items():
                self.initial.setdefault(usd, getattr(self.instance, micros))

    def clean_use_cases(self):
        """One use case per line, as an import keeps them."""
        lines = use_cases_of(self.cleaned_data.get("use_cases", ""))
        if not lines:
            return ""
        try:
            return use_cases_join(use_cases_clean(list(lines)))
        except UseCaseError as error:
            raise forms.ValidationError(f"The use cases: {error}.") from None

    def clean_requirements(self):
        """The same rules an import accepts, naming the endpoint's own parameters."""
        declared = [
            param.get("name")
            for field in ("path_params", "query_params", "body_params")
            for param in self.cleaned_data.get(field) or []
            if isinstance(param, dict)
        ]
        try:
            return requirements_parse(
                self.cleaned_data.get("requirements") or [], declared=declared
            )
        except RequirementError as error:
            raise forms.ValidationError(str(error)) from None

    def clean(self):
        cleaned = super().clean()
        kind = cleaned.get("price_kind")
        price = cleaned.get("price_usd")
        if kind == Endpoint.PriceKind.FIXED and not price:
            self.add_error("price_usd", "A fixed price needs an amount above zero (or use Free)")
        if kind == Endpoint.PriceKind.PER_RESULT:
            if not price:
                self.add_error("price_usd", "A per-result price needs the price of one result")
            if not cleaned.get("result_count_path"):
                self.add_error(
                    "result_count_path",
                    "A per-result price needs the response path where results are counted",
                )
        if kind == Endpoint.PriceKind.DYNAMIC:
            for name in ("input_usd_per_mtok", "output_usd_per_mtok"):
                if cleaned.get(name) is None:
                    self.add_error(name, "A dynamic price needs both per-million-token prices")
        return cleaned

    def save(self, commit=True):
        endpoint = super().save(commit=False)
        kind = self.cleaned_data["price_kind"]
        uses_amount = kind in (Endpoint.PriceKind.FIXED, Endpoint.PriceKind.PER_RESULT)
        endpoint.price_micros = (self.cleaned_data.get("price_usd") or 0) if uses_amount else 0
        is_dynamic = kind == Endpoint.PriceKind.DYNAMIC
        endpoint.input_micros_per_mtok = (
            self.cleaned_data.get("input_usd_per_mtok") or 0 if is_dynamic else 0
        )
        endpoint.output_micros_per_mtok = (
            self.cleaned_data.get("output_usd_per_mtok") or 0 if is_dynamic else 0
        )
        if kind != Endpoint.PriceKind.PER_RESULT:
            endpoint.result_count_path = ""
        if commit:
            endpoint.save()
        return endpoint


def endpoint_fields_changed(form: forms.ModelForm) -> list[str]:
    """The model fields that an endpoint's form (the change page's or a row of the list's)
    changed, each amount named by the field that stores it."""
    stored_in = {usd: micros for micros, usd in ENDPOINT_USD_FIELDS.items()}
    return [stored_in.get(name, name) for name in form.changed_data]


class OpenApiImportForm(forms.Form):
    document = forms.FileField(
        required=False, help_text="An OpenAPI document (Swagger 2.0, 3.0 or 3.1; JSON or YAML)"
    )
    url = forms.URLField(
        required=False, assume_scheme="https", help_text="…or the http(s) address of one"
    )
    slug = forms.SlugField(
        required=False, help_text="Default: x-gateway-api.slug, else the slugified info.title"
    )
    price_usd = UsdField(
        required=False,
        label="Default price (USD)",
        help_text=f"For operations without x-gateway-price (default "
        f"{settings.CATALOG_DEFAULT_PRICE_USD})",
    )
    verify = forms.BooleanField(required=False, help_text="Mark the imported API verified")
    replace = forms.BooleanField(
        required=False,
        help_text="Update the API of the same slug even if another document created it "
        "(without it, such a document is refused unless it names its slug)",
    )

    def clean(self):
        cleaned = super().clean()
        if bool(cleaned.get("document")) == bool(cleaned.get("url")):
            raise forms.ValidationError("Give either a document file or a URL")
        if cleaned.get("price_usd") is None:
            cleaned["price_usd"] = usd_to_micros(settings.CATALOG_DEFAULT_PRICE_USD)
        return cleaned
