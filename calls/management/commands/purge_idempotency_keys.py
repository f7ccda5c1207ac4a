from django.core.management.base import BaseCommand

from calls.idempotency import idempotency_purge_expired


class Command(BaseCommand):
    help = (
        "Delete the Idempotency-Key records older than IDEMPOTENCY_KEY_TTL_SECONDS "
        "(run it from cron, e.g. hourly)."
    )

    def handle(self, *args, **options):
        self.stdout.write(f"Deleted {idempotency_purge_expired()} expired idempotency keys")
