import secrets

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.urls import reverse

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
        "Provision the demo user with $10 of credits, a dashboard password and a live and a test "
        "key. The password and the keys are printed once, when they are created; --rotate "
        "replaces all three and prints the new ones."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--rotate", action="store_true", help="replace the demo keys and password"
        )

    def handle(self, *args, rotate, **options):
        password = None
        with transaction.atomic():
            user, _ = user_get_or_create(email=DEMO_EMAIL)
            if rotate or not user.has_usable_password():
                # Shown once like the keys; only its hash is kept.
                password = secrets.token_urlsafe(12)
                user.set_password(password)
                user.save(update_fields=["password"])
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

        if not created and password is None:
            masked = ", ".join(api_key.masked for api_key in existing.values())
            self.stdout.write(
                f"Demo user {DEMO_EMAIL} already has its keys ({masked}) and its dashboard "
                "password; they were printed when first created. Run `python manage.py "
                "provision_demo --rotate` for new ones."
            )
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo user {DEMO_EMAIL} with {format_usd(DEMO_CREDITS_MICROS)} of credits; "
                "shown only this once:"
            )
        )
        if password is not None:
            login_url = f"{settings.GATEWAY_BASE_URL}{reverse('dashboard:login')}"
            self.stdout.write(f"  dashboard: {login_url}  email {DEMO_EMAIL}  password {password}")
        for mode, secret in created.items():
            self.stdout.write(f"  {mode} key: {secret}")
        if existing:
            masked = ", ".join(api_key.masked for api_key in existing.values())
            self.stdout.write(f"  keys printed when they were created: {masked}")
