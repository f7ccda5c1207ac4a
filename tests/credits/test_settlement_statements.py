"""The one-statement settlement (credits.settlement_sql) on PostgreSQL: each statement is parsed
and planned once per connection, whatever the amounts it carries."""

from django.db import connection

from credits.services.accounts import account_for_organization
from credits.services.holds import hold_capture, hold_reserve
from tests.factories import fund


def _prepared_statements() -> dict[str, int]:
    """Prepared statements of this connection that start with a CTE: how many times each ran."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement, generic_plans + custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE '%WITH %'"
        )
        # Keyed by the name of the statement's first CTE ("taken", "receipts").
        return {statement.split()[1]: runs for statement, runs in cursor}


def test_reserve_and_capture_are_each_prepared_once_whatever_the_amounts(alice, settings):
    settings.CREDITS_ONE_STATEMENT_SETTLEMENT = True
    account = fund(alice.user, 10_000_000_000)
    provider = account_for_organization(organization=alice.organization)
    # int2-, int4- and int8-sized amounts: psycopg would type each differently by default.
    amounts = [7, 1_000, 70_000, 3_000_000_000]
    for number, amount in enumerate(amounts):
        hold = hold_reserve(account=account, amount_micros=amount, request_id=f"run_{number}")
        hold_capture(hold=hold, amount_micros=amount, provider_account=provider, description="x")

    assert _prepared_statements() == {"taken": len(amounts), "receipts": len(amounts)}
