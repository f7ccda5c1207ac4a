import re
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from gateway import key_cache
from gateway.errors import Unauthorized
from gateway.models import ApiKey, Membership, Organization, User, hash_api_key_secret

API_KEY_FORMAT = re.compile(r"^gw_(live|test)_[A-Za-z0-9_-]{32,128}$")


@dataclass(frozen=True)
class KeyPrincipal:
    """Who is calling: an active API key and its owner, as cached between requests."""

    key_id: int
    mode: str
    masked: str
    name: str
    user_id: int | None
    organization_id: int | None
    owner_label: str
    rate_limit_per_minute: int | None

    is_authenticated = True

    @property
    def is_test(self) -> bool:
        return self.mode == ApiKey.Mode.TEST

    @property
    def owner_type(self) -> str:
        return "organization" if self.organization_id else "user"


def _principal_from_row(api_key: ApiKey) -> KeyPrincipal:
    owner_label = api_key.organization.slug if api_key.organization_id else api_key.user.email
    return KeyPrincipal(
        key_id=api_key.pk,
        mode=api_key.mode,
        masked=api_key.masked,
        name=api_key.name,
        user_id=api_key.user_id,
        organization_id=api_key.organization_id,
        owner_label=owner_label,
        rate_limit_per_minute=api_key.rate_limit_per_minute,
    )


def api_key_authenticate(*, secret: str) -> KeyPrincipal:
    """The principal for a presented secret, or Unauthorized saying why not."""
    if not API_KEY_FORMAT.match(secret):
        raise Unauthorized("Malformed API key: expected gw_live_… or gw_test_…")
    key_hash = hash_api_key_secret(secret)
    principal = key_cache.local_get(key_hash)
    if principal is None:
        principal = _api_key_principal(key_hash)
        key_cache.local_put(key_hash, principal)
    return principal


def _api_key_principal(key_hash: str) -> KeyPrincipal:
    cache_key = key_cache.shared_key(key_hash)
    principal = cache.get(cache_key)
    if principal is not None:
        return principal
    api_key = (
        ApiKey.objects.select_related("user", "organization").filter(key_hash=key_hash).first()
    )
    if api_key is None:
        raise Unauthorized("Unknown API key")
    if api_key.is_revoked:
        raise Unauthorized("This API key has been revoked")
    if api_key.user_id and not api_key.user.is_active:
        raise Unauthorized("The owner of this API key is deactivated")
    principal = _principal_from_row(api_key)
    cache.set(cache_key, principal, timeout=settings.API_KEY_CACHE_SECONDS)
    return principal


def api_keys_for_user(*, user: User):
    return ApiKey.objects.filter(user=user).order_by("-created_at")


def api_keys_for_organization(*, organization: Organization):
    return ApiKey.objects.filter(organization=organization).order_by("-created_at")


def organization_role(*, organization: Organization, user: User) -> str | None:
    membership = Membership.objects.filter(organization=organization, user=user).first()
    return membership.role if membership else None


def memberships_for_user(*, user: User) -> list[Membership]:
    """The organizations a person belongs to, with their role, by organization name."""
    return list(
        Membership.objects.filter(user=user)
        .select_related("organization")
        .order_by("organization__name", "organization__slug")
    )


def organization_members(*, organization: Organization) -> list[Membership]:
    """Owners first, then members, each by email."""
    return list(
        Membership.objects.filter(organization=organization)
        .select_related("user")
        .order_by("-role", "user__email")  # "owner" sorts after "member"
    )


def organization_role_may_manage_keys(*, role: str | None) -> bool:
    """Owners create and revoke an organization's keys; members see them.

    An organization key spends the shared balance and its secret cannot be shown again, so
    handing one out, or cutting off every integration that uses one, is the owners' decision.
    """
    return role == Membership.Role.OWNER
