from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from credits.services.accounts import account_for_organization, account_for_user
from credits.services.ledger import credits_grant
from gateway.models import ApiKey, Membership, Organization
from gateway.money import usd_to_micros
from gateway.services import api_key_create, organization_create, user_get_or_create


class Command(BaseCommand):
    help = (
        "Create an API key for a user (created if missing) or, with --org, for an organization "
        "(created with the user as owner if missing). Prints only the new key on stdout."
    )

    def add_arguments(self, parser):
        parser.add_argument("--email", required=True, help="owner's email")
        parser.add_argument("--org", metavar="SLUG", help="make an organization key for this org")
        parser.add_argument("--mode", choices=ApiKey.Mode.values, default=ApiKey.Mode.LIVE)
        parser.add_argument("--name", default="", help="a label shown in the dashboard")
        parser.add_argument(
            "--credits-usd", metavar="X", help="grant this many dollars to the key's owner"
        )

    def handle(self, *args, email, org, mode, name, credits_usd, **options):
        grant_micros = self._grant_amount(credits_usd)
        with transaction.atomic():
            user, _ = user_get_or_create(email=email)
            organization = None
            if org:
                organization = Organization.objects.filter(slug=org).first()
                if organization is None:
                    organization = organization_create(name=org, slug=org, owner=user)
                elif not Membership.objects.filter(organization=organization, user=user).exists():
                    raise CommandError(f"{user.email} is not a member of organization {org!r}")
            _, secret = api_key_create(
                mode=mode,
                user=None if organization else user,
                organization=organization,
                name=name,
            )
            if grant_micros:
                account = (
                    account_for_organization(organization=organization)
                    if organization
                    else account_for_user(user=user)
                )
                credits_grant(
                    account=account,
                    amount_micros=grant_micros,
                    reason="Credits granted with a new API key",
                )
        self.stdout.write(secret)

    @staticmethod
    def _grant_amount(credits_usd: str | None) -> int:
        if credits_usd is None:
            return 0
        try:
            micros = usd_to_micros(credits_usd)
        except ValueError as error:
            raise CommandError(f"--credits-usd: {error}") from None
        if micros < 0:
            raise CommandError("--credits-usd must not be negative")
        return micros
