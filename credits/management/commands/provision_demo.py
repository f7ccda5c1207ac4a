from django.core.management.base import BaseCommand
from django.db import transaction

from credits.services.accounts import account_for_user
from credits.services.ledger import credits_grant
from gateway.models import ApiKey
from gateway.money import format_usd
from gateway.selectors import api_keys_for_user
from gateway.services import api_key_create, api_key_revoke, user_get_or_create

DEMO_EMAIL = "demo@example.com"
DEMO_CREDITS_MICROS = 10_000_000
DEMO_KEY_NAMES = {ApiKey.Mode.LIVE: "demo live key", ApiKey.Mode.TEST: "demo test key"}


class Command(BaseCommand):
    help = (
        "Provision the demo user with $10 of credits and a live and a test key. The keys are "
        "printed once, when they are created; --rotate revokes the demo keys and prints new ones."
    )

    def add_arguments(self, parser):
        parser.add_argument("--rotate", action="store_true", help="replace the demo keys")

    def handle(self, *args, rotate, **options):
        with transaction.atomic():
            user, _ = user_get_or_create(email=DEMO_EMAIL)
            active = api_keys_for_user(user=user).filter(
                revoked_at__isnull=True, name__in=DEMO_KEY_NAMES.values()
            )
            if rotate:
                for api_key in active:
                    api_key_revoke(api_key=api_key)
                active = active.none()
            existing = {api_key.mode: api_key for api_key in active}
            created = {}
            for mode, name in DEMO_KEY_NAMES.items():
                if mode not in existing:
                    _, created[mode] = api_key_create(mode=mode, user=user, name=name)
            # The idempotency reference makes the welcome grant happen once per demo user.
            credits_grant(
                account=account_for_user(user=user),
                amount_micros=DEMO_CREDITS_MICROS,
                reason="Demo credits",
                idempotency_ref=f"demo-welcome-{user.pk}",
            )

        if not created:
            masked = ", ".join(api_key.masked for api_key in existing.values())
            self.stdout.write(
                f"Demo user {DEMO_EMAIL} already has its keys ({masked}); they were printed when "
                "first created. Run `python manage.py provision_demo --rotate` for new ones."
            )
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo user {DEMO_EMAIL} with {format_usd(DEMO_CREDITS_MICROS)} of credits; "
                "keys shown only this once:"
            )
        )
        for mode, secret in created.items():
            self.stdout.write(f"  {mode} key: {secret}")
