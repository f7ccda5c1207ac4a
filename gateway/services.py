import secrets
import time
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from gateway import key_cache
from gateway.errors import InvalidRequest
from gateway.models import ApiKey, Membership, Organization, User, hash_api_key_secret

API_KEY_PREFIXES = {ApiKey.Mode.LIVE: "gw_live_", ApiKey.Mode.TEST: "gw_test_"}


def user_get_or_create(*, email: str) -> tuple[User, bool]:
    email = User.objects.normalize_email(email).lower()
    user = User.objects.filter(email=email).first()
    if user:
        return user, False
    try:
        with transaction.atomic():
            return User.objects.create_user(email=email), True
    except IntegrityError:
        return User.objects.get(email=email), False


def user_create(*, email: str, password: str) -> User:
    """A person signing up: the address is stored lower-case, so sign-in ignores case."""
    return User.objects.create_user(email=email, password=password)


def organization_create(*, name: str, slug: str, owner: User) -> Organization:
    with transaction.atomic():
        organization = Organization.objects.create(name=name, slug=slug)
        Membership.objects.create(user=owner, organization=organization, role=Membership.Role.OWNER)
    return organization


def membership_add(*, organization: Organization, user: User, role: str) -> Membership:
    membership, _ = Membership.objects.get_or_create(
        organization=organization, user=user, defaults={"role": role}
    )
    return membership


def api_key_create(
    *,
    mode: str,
    user: User | None = None,
    organization: Organization | None = None,
    name: str = "",
    rate_limit_per_minute: int | None = None,
) -> tuple[ApiKey, str]:
    """Create a key and return it with its secret, which is never available again."""
    if (user is None) == (organization is None):
        raise InvalidRequest("A key belongs to exactly one user or one organization")
    if mode not in API_KEY_PREFIXES:
        raise InvalidRequest(f"mode must be one of: {', '.join(API_KEY_PREFIXES)}")
    secret = API_KEY_PREFIXES[mode] + secrets.token_urlsafe(32)
    api_key = ApiKey.objects.create(
        user=user,
        organization=organization,
        name=name,
        mode=mode,
        key_hash=hash_api_key_secret(secret),
        prefix=secret[:12],
        last4=secret[-4:],
        rate_limit_per_minute=rate_limit_per_minute,
    )
    return api_key, secret


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    # The cached principal is dropped after the commit so no worker re-caches the old row.
    transaction.on_commit(lambda: key_cache.forget(api_key.key_hash))
    return api_key


_last_touched: dict[int, float] = {}
TOUCH_INTERVAL_SECONDS = 60


def api_key_touch(*, api_key_id: int) -> None:
    """Record use at most once a minute per key.

    The conditional UPDATE makes "at most once a minute" hold across workers; the in-process
    clock spares all but about one request a minute per worker from issuing it.
    """
    now = time.monotonic()
    if now - _last_touched.get(api_key_id, float("-inf")) < TOUCH_INTERVAL_SECONDS:
        return
    _last_touched[api_key_id] = now
    moment = timezone.now()
    ApiKey.objects.filter(pk=api_key_id).filter(
        Q(last_used_at__isnull=True)
        | Q(last_used_at__lt=moment - timedelta(seconds=TOUCH_INTERVAL_SECONDS))
    ).update(last_used_at=moment)


def api_key_update(*, api_key: ApiKey, name: str, rate_limit_per_minute: int | None) -> ApiKey:
    api_key.name = name
    api_key.rate_limit_per_minute = rate_limit_per_minute
    api_key.save(update_fields=["name", "rate_limit_per_minute"])
    transaction.on_commit(lambda: key_cache.forget(api_key.key_hash))
    return api_key
