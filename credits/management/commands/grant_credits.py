from django.core.management.base import BaseCommand, CommandError

from credits.services.accounts import account_for_organization, account_for_user
from credits.services.ledger import GRANT_REASON_MAX_LENGTH, credits_grant
from gateway.models import Organization, User
from gateway.money import format_usd, usd_to_micros


class Command(BaseCommand):
    help = "Grant credits from the platform to a user or an organization."

    def add_arguments(self, parser):
        owner = parser.add_mutually_exclusive_group(required=True)
        owner.add_argument("--email", help="the user to credit")
        owner.add_argument("--org", metavar="SLUG", help="the organization to credit")
        parser.add_argument("--usd", required=True, help="dollars to grant, e.g. 25 or 0.50")
        parser.add_argument("--reason", required=True, help="shown in the transaction history")

    def handle(self, *args, email, org, usd, reason, **options):
        try:
            amount_micros = usd_to_micros(usd)
        except ValueError as error:
            raise CommandError(f"--usd: {error}") from None
        if amount_micros <= 0:
            raise CommandError("--usd must be positive")
        if not reason.strip() or len(reason) > GRANT_REASON_MAX_LENGTH:
            raise CommandError(f"--reason must be 1 to {GRANT_REASON_MAX_LENGTH} characters")
        if email:
            user = User.objects.filter(email=email.lower()).first()
            if user is None:
                raise CommandError(f"No user with email {email}")
            account = account_for_user(user=user)
        else:
            organization = Organization.objects.filter(slug=org).first()
            if organization is None:
                raise CommandError(f"No organization with slug {org}")
            account = account_for_organization(organization=organization)
        credits_grant(account=account, amount_micros=amount_micros, reason=reason)
        account.refresh_from_db()
        self.stdout.write(
            f"Granted {format_usd(amount_micros)} to {account}; balance "
            f"{format_usd(account.balance_micros)}"
        )
