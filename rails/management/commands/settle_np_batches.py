from django.core.management.base import BaseCommand

from rails.settlement import np_batches_settle


class Command(BaseCommand):
    help = (
        "Settle the np rail's served payments in batches through the np facilitator. Safe to run "
        "from cron at any interval, again after a crash, or twice at once: a batch is settled once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--batch-size",
            type=int,
            default=None,
            help="payments per batch (NP_BATCH_MAX_PAYMENTS)",
        )

    def handle(self, *args, batch_size=None, **options):
        run = np_batches_settle(limit=batch_size)
        self.stdout.write(
            f"batches {run.batches}, payments settled {run.settled}, failed {run.failed}, "
            f"batches unanswered {run.unanswered}"
        )
