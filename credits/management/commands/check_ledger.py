from django.core.management.base import BaseCommand, CommandError

from credits.models import Account, LedgerEntry
from credits.selectors import ledger_discrepancies


class Command(BaseCommand):
    help = (
        "Verify the books: every account's rolled-up balance equals the sum of its rolled-up "
        "entries (its balance, the sum of all its entries), its held "
        "amount equals its pending holds, and every business event sums to zero. Exits non-zero "
        "on any drift."
    )

    def handle(self, *args, **options):
        drifts = ledger_discrepancies()
        accounts = Account.objects.count()
        entries = LedgerEntry.objects.count()
        if drifts:
            for drift in drifts:
                self.stderr.write(f"DRIFT {drift}")
            raise CommandError(
                f"{len(drifts)} discrepancies across {accounts} accounts and {entries} entries"
            )
        self.stdout.write(f"Ledger clean: {accounts} accounts, {entries} entries, no drift")
