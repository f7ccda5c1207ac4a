from dataclasses import dataclass

from catalog.models import Endpoint, ProviderApi
from credits.models import Account
from credits.services.accounts import account_for_organization, account_for_user
from credits.services.ledger import credits_grant
from gateway.models import ApiKey, Membership, Organization, User, hash_api_key_secret
from gateway.services import api_key_create, membership_add, organization_create


@dataclass
class KeyedPersona:
    user: User
    live_key: str
    test_key: str
    organization: Organization | None = None
    org_key: str | None = None


def make_persona(
    email: str, *, org_slug: str | None = None, member_of: Organization | None = None
) -> KeyedPersona:
    user = User.objects.create_user(email=email, password="correct horse battery staple")
    _, live_key = api_key_create(mode=ApiKey.Mode.LIVE, user=user, name="live")
    _, test_key = api_key_create(mode=ApiKey.Mode.TEST, user=user, name="test")
    persona = KeyedPersona(user=user, live_key=live_key, test_key=test_key)
    if org_slug:
        persona.organization = organization_create(name=org_slug.title(), slug=org_slug, owner=user)
        _, persona.org_key = api_key_create(
            mode=ApiKey.Mode.LIVE, organization=persona.organization, name="org"
        )
    if member_of:
        membership_add(organization=member_of, user=user, role=Membership.Role.MEMBER)
        persona.organization = member_of
    return persona


def api_key_row(secret: str) -> ApiKey:
    return ApiKey.objects.get(key_hash=hash_api_key_secret(secret))


def fund(user: User, micros: int) -> Account:
    """Grant a user `micros` micro-dollars and return the account."""
    account = account_for_user(user=user)
    credits_grant(account=account, amount_micros=micros, reason="test funds")
    account.refresh_from_db()
    return account


def provider_account(slug: str = "provider-co") -> Account:
    organization, _ = Organization.objects.get_or_create(slug=slug, defaults={"name": slug})
    return account_for_organization(organization=organization)


def make_provider_api(slug: str = "acme-search", **fields):
    defaults = {
        "name": slug.replace("-", " ").title(),
        "description": f"The {slug} API",
        "base_url": f"https://{slug}.example",
    }
    return ProviderApi.objects.create(slug=slug, **{**defaults, **fields})


def make_endpoint(api, path: str = "/v1/search", method: str = "GET", **fields):
    defaults = {
        "summary": f"{method} {path}",
        "price_kind": Endpoint.PriceKind.FIXED,
        "price_micros": 10_000,
    }
    return Endpoint.objects.create(api=api, method=method, path=path, **{**defaults, **fields})
