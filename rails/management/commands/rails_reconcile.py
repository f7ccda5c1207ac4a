from django.core.management.base import BaseCommand

from rails.settlement import pending_payments_reconcile


class Command(BaseCommand):
    help = (
        "Settle the x402 payments and mpp transactions whose settlement did not answer in time "
        "(status pending). "
        "Safe to run from cron and to run again."
    )

    def handle(self, *args, **options):
        run = pending_payments_reconcile()
        self.stdout.write(
            f"pending payments settled {run.settled}, failed {run.failed}, "
            f"unanswered {run.unanswered}"
        )
