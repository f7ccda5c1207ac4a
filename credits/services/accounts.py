"""Accounts: one per user, organization and the platform, created on first use, and the row
locks every change to money takes on them (in id order)."""

from django.db import IntegrityError, transaction

from credits.models import Account
from gateway.models import Organization, User


def account_for_user(*, user: User | int) -> Account:
    user_id = user if isinstance(user, int) else user.pk
    return _account_get_or_create(kind=Account.Kind.USER, user_id=user_id)


def account_for_organization(*, organization: Organization | int) -> Account:
    organization_id = organization if isinstance(organization, int) else organization.pk
    return _account_get_or_create(kind=Account.Kind.ORGANIZATION, organization_id=organization_id)


def account_platform() -> Account:
    return _account_get_or_create(kind=Account.Kind.PLATFORM)


def account_for_owner(*, user_id: int | None, organization_id: int | None) -> Account:
    if organization_id:
        return account_for_organization(organization=organization_id)
    return account_for_user(user=user_id)


# Accounts never change owner and are never deleted, so their ids can be remembered per process.
_account_ids: dict[tuple[str, int], int] = {}
_platform_id: int | None = None


def account_id_for_owner(*, user_id: int | None, organization_id: int | None) -> int:
    key = ("organization", organization_id) if organization_id else ("user", user_id)
    account_id = _account_ids.get(key)
    if account_id is None:
        account_id = account_for_owner(user_id=user_id, organization_id=organization_id).pk
        _account_ids[key] = account_id
    return account_id


def _platform_account_id(*, look_up_again: bool = False) -> int:
    """The platform account's id, remembered per process; ``look_up_again`` finds (or creates)
    it anew, for a caller that found the remembered one gone."""
    global _platform_id
    if _platform_id is None or look_up_again:
        _platform_id = account_platform().pk
    return _platform_id


def account_ids_forget() -> None:
    """Forget the account ids this process remembers (tests roll accounts back)."""
    global _platform_id
    _account_ids.clear()
    _platform_id = None


def _account_get_or_create(*, kind: str, **owner) -> Account:
    account = Account.objects.with_balance().filter(kind=kind, **owner).first()
    if account:
        return account
    try:
        with transaction.atomic():
            return Account.objects.create(kind=kind, **owner)
    except IntegrityError:  # created concurrently; the unique owner constraint decided
        return Account.objects.get(kind=kind, **owner)


def _for_update(manager):
    """Row locks for writers that never change a key column: FOR NO KEY UPDATE excludes every
    other writer as FOR UPDATE does, but not the KEY SHARE lock a foreign key check takes, so
    inserting a row that refers to an account (a rejected call's usage event) never waits for
    that account's settlement."""
    return manager.select_for_update(no_key=True)


def _lock_accounts(account_ids) -> dict[int, Account]:
    locked = _for_update(Account.objects).filter(pk__in=set(account_ids)).order_by("pk")
    return {account.pk: account for account in locked}
