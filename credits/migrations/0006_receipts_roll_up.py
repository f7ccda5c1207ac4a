from django.db import migrations, models
from django.db.models import F, Q


class Migration(migrations.Migration):
    """Receipts: entries booked without their account's lock, rolled up later.

    The cached balance becomes the rolled-up balance (every entry so far is rolled up), entries
    may carry no balance after them, and the receipts waiting for the roll-up are indexed.
    """

    dependencies = [
        ("credits", "0005_longer_descriptions"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="account", name="account_balance_not_negative"),
        migrations.RemoveConstraint(model_name="account", name="account_held_within_balance"),
        migrations.RenameField(
            model_name="account", old_name="balance_micros", new_name="rolled_up_micros"
        ),
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=Q(kind="platform") | Q(rolled_up_micros__gte=0),
                name="account_balance_not_negative",
            ),
        ),
        migrations.AddConstraint(
            model_name="account",
            constraint=models.CheckConstraint(
                condition=Q(held_micros__gte=0)
                & (Q(kind="platform") | Q(held_micros__lte=F("rolled_up_micros"))),
                name="account_held_within_balance",
            ),
        ),
        migrations.AlterField(
            model_name="ledgerentry",
            name="balance_after_micros",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="ledgerentry",
            name="rolled_up",
            field=models.BooleanField(default=True),
        ),
        migrations.AddIndex(
            model_name="ledgerentry",
            index=models.Index(
                condition=Q(rolled_up=False), fields=["account"], name="ledger_entry_pending"
            ),
        ),
    ]
