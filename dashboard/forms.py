from django import forms
from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm

from credits.models import UsageEvent
from gateway.models import ApiKey, User

USAGE_WINDOWS = [(7, "Last 7 days"), (30, "Last 30 days"), (90, "Last 90 days")]
DEFAULT_USAGE_WINDOW = 30


def normalized_email(address: str) -> str:
    """An email address as stored and signed in with: trimmed, lower-case."""
    return User.objects.normalize_email(address.strip()).lower()


class SignUpForm(BaseUserCreationForm):
    """Email and password (twice), checked by the configured password validators. Whether the
    address has an account is not the form's business: its answer must not tell."""

    class Meta:
        model = User
        fields = ("email",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["email"].widget.attrs["autocomplete"] = "email"

    def clean_email(self):
        return normalized_email(self.cleaned_data["email"])

    def validate_unique(self):
        # An address with an account is mailed that it has one (dashboard.services.sign_up_start);
        # refusing it here would tell anyone who asks.
        pass


class EmailAuthenticationForm(AuthenticationForm):
    """Sign-in by email address, whatever its case (addresses are stored lower-case)."""

    error_messages = {
        **AuthenticationForm.error_messages,
        # Said on every failure: an account whose address is not confirmed yet does not exist,
        # and telling that apart would tell who signed up.
        "invalid_login": (
            "Please enter a correct %(username)s and password. Signed up just now? Follow the "
            "link in the confirmation email first."
        ),
    }

    def clean_username(self):
        return normalized_email(self.cleaned_data["username"])


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        help_text="What the key is for, such as the app or the machine that uses it.",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    mode = forms.ChoiceField(
        choices=ApiKey.Mode.choices,
        initial=ApiKey.Mode.LIVE,
        widget=forms.RadioSelect,
        help_text="Live keys call providers and are charged; test keys call the free sandbox.",
    )


class UsageFilterForm(forms.Form):
    """The usage page's GET filters; an invalid value falls back to its default."""

    days = forms.TypedChoiceField(
        label="Window",
        choices=USAGE_WINDOWS,
        coerce=int,
        required=False,
        empty_value=DEFAULT_USAGE_WINDOW,
    )
    api = forms.ChoiceField(label="API", required=False)
    status = forms.ChoiceField(
        label="Status",
        choices=[("", "Any status"), *UsageEvent.Status.choices],
        required=False,
    )

    def __init__(self, *args, api_slugs: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["api"].choices = [("", "Any API"), *((slug, slug) for slug in api_slugs)]

    def filters(self) -> dict:
        self.is_valid()
        return {
            "days": self.cleaned_data.get("days", DEFAULT_USAGE_WINDOW),
            "api": self.cleaned_data.get("api", ""),
            "status": self.cleaned_data.get("status", ""),
        }


class SearchInput(forms.TextInput):
    input_type = "search"


class CatalogSearchForm(forms.Form):
    """The catalog's search box: a need in plain language, as POST /v1/search takes it."""

    q = forms.CharField(
        label="Describe what you need",
        max_length=1000,
        required=False,
        widget=SearchInput(attrs={"placeholder": "find the work email of a person at a company"}),
    )


class CatalogFilterForm(forms.Form):
    """The API list's GET filter; an invalid value falls back to every API."""

    verified = forms.ChoiceField(
        label="Show",
        choices=[("", "All APIs"), ("yes", "Verified APIs"), ("no", "Unverified APIs")],
        required=False,
    )

    def filters(self) -> dict:
        self.is_valid()
        return {"verified": {"yes": True, "no": False}.get(self.cleaned_data.get("verified"))}
