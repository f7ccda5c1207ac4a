from django.core.management.base import BaseCommand

from credits.services.ledger import ROLL_UP_BATCH, receipts_roll_up


class Command(BaseCommand):
    help = (
        "Fold the receipts waiting for the roll-up (providers' revenue, the platform's fee) into "
        "their accounts' rolled-up balances. Balances read the same before and after: run it "
        "from cron (every minute) to keep the receipts a balance read sums few. Idempotent; two "
        "runs at once wait for each other account by account."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--batch-size",
            type=int,
            default=ROLL_UP_BATCH,
            help=f"receipts folded per transaction (default {ROLL_UP_BATCH})",
        )

    def handle(self, *args, batch_size, **options):
        folded, accounts = receipts_roll_up(batch_size=batch_size)
        self.stdout.write(f"Rolled up {folded} receipts into {accounts} accounts")
