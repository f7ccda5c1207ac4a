"""The two hottest writes of the gateway, each as one PostgreSQL statement.

A paid call reserves a hold and later captures it. Each locks the caller's account row and no
other: the provider's revenue and the platform's fee are receipts (see credits.models.Account).
Done with the ORM, each is a transaction of several statements, and on a busy 2-core machine
every round trip to PostgreSQL costs far more than the work it carries. Here each is a single
statement, atomic on its own: data-modifying CTEs that lock, check, move and record in one go.
credits.services.holds uses them on PostgreSQL (unless CREDITS_ONE_STATEMENT_SETTLEMENT is off)
and its portable ORM transactions elsewhere; the test suite runs the money tests against both.

Both are sent with server-side parameters and prepared on their connection (psycopg prepares a
statement on first use and reuses it while the connection lives; the database settings give it
a prepare threshold, which Django leaves unset), so PostgreSQL parses and plans each once per
connection instead of once per call. psycopg keys a prepared statement by its text and its
parameters' types, and would type a small integer int2 and a larger one int4: every integer is
sent as a bigint, so each statement has one prepared form. The SQL casts every parameter.
"""

import enum
import json
from datetime import datetime

import psycopg
from django.db import connection
from psycopg.types.numeric import Int8Dumper

from credits.models import Account, Hold, LedgerEntry, UsageEvent

ACCOUNTS = Account._meta.db_table
HOLDS = Hold._meta.db_table
ENTRIES = LedgerEntry._meta.db_table
USAGE = UsageEvent._meta.db_table


def _execute(sql: str, params: dict) -> tuple:
    """Run one prepared statement on Django's connection (inside its transaction, if any) and
    return its single row, or None."""
    connection.ensure_connection()
    # Django's own cursors turn psycopg's errors into django.db's (IntegrityError, ...).
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.adapters.register_dumper(int, Int8Dumper)
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchone()


class CaptureOutcome(enum.Enum):
    CAPTURED = "captured"
    NOT_PENDING = "not pending"
    MISSING_ACCOUNT = "missing account"


def reserve(hold: Hold) -> bool:
    """Take the hold's amount from the account's available funds and insert the hold.

    False (and nothing written) when the rolled-up funds do not cover it; the caller then rolls
    the account's receipts up under its lock and checks again. A duplicate request id
    raises IntegrityError, undoing the whole statement.

    Run on its own (outside a transaction), the reservation commits without waiting for its
    WAL to reach the disk (see reserve_statement).
    """
    row = _execute(*reserve_statement(hold, durable=connection.in_atomic_block))
    if row is None:
        return False
    hold.pk = row[0]
    hold._state.adding = False
    return True


def reserve_statement(hold: Hold, *, durable: bool = True) -> tuple[str, dict]:
    """The reservation of ``hold`` as SQL and its parameters; it returns the new hold's id.

    Not ``durable``, the statement's own transaction commits with synchronous_commit off: it
    returns without waiting for the WAL flush, a paid call's slowest step on a quiet database.
    Nothing is lost that matters: the capture commits synchronously, which flushes every WAL
    record before its own, the reservation's included, so no charge ever rests on a
    reservation that a crash could undo; and a reservation a crash does undo (with its hold,
    in the same record) leaves a call that can no longer be charged, not a wrong balance.
    Inside a larger transaction it stays durable, since the setting would cover all of it.
    """
    asynchronous = ""
    if not durable:
        asynchronous = """asynchronous AS (SELECT set_config('synchronous_commit', 'off', true)),
        """
    return (
        f"""
        WITH {asynchronous}taken AS (
            UPDATE {ACCOUNTS} SET held_micros = held_micros + %(amount)s::bigint
            WHERE id = %(account)s::bigint
              AND rolled_up_micros - held_micros >= %(amount)s::bigint
              {"AND EXISTS (SELECT 1 FROM asynchronous)" if asynchronous else ""}
            RETURNING id
        )
        INSERT INTO {HOLDS} (account_id, request_id, amount_micros, status, description,
                             metadata, created_at, expires_at)
        SELECT id, %(request_id)s::varchar, %(amount)s::bigint, %(pending)s::varchar,
               %(description)s::varchar, %(metadata)s::jsonb, %(created_at)s::timestamptz,
               %(expires_at)s::timestamptz
        FROM taken
        RETURNING id
        """,
        {
            "amount": hold.amount_micros,
            "account": hold.account_id,
            "request_id": hold.request_id,
            "pending": Hold.Status.PENDING.value,
            "description": hold.description,
            "metadata": json.dumps(hold.metadata),
            "created_at": hold.created_at,
            "expires_at": hold.expires_at,
        },
    )


def capture(statement: tuple[str, dict]) -> "CaptureOutcome":
    """Run a capture built by capture_statement and say what it did."""
    sql, params = statement
    claimed, present = _execute(sql, params)
    if present < params["receipt_accounts"]:
        return CaptureOutcome.MISSING_ACCOUNT
    return CaptureOutcome.CAPTURED if claimed else CaptureOutcome.NOT_PENDING


def capture_statement(
    *,
    hold: Hold,
    amount_micros: int,
    receipts: list[tuple[int, str, int, str]],
    description: str,
    metadata: dict,
    event_ref: str,
    now: datetime,
    usage: UsageEvent | None,
) -> tuple[str, dict]:
    """The capture of ``hold`` as SQL and its parameters, for capture (or a benchmark) to run:
    mark the pending hold captured, charge the caller (releasing the hold from its held
    amount), append the receipts, and record the usage event. The statement returns how many
    holds it claimed (0 or 1) and how many of the receipts' accounts exist.

    Only the caller's account row is locked. ``receipts`` are (account id, entry type, amount,
    role): the provider's revenue and the platform's fee, appended as entries waiting for the
    roll-up, without touching their accounts' rows. The caller's own waiting receipts are rolled
    up on the way, so the charge carries the caller's whole balance after it. Nothing is
    written when the hold was no longer pending or a receipt names an account that does not
    exist.
    """
    params = {
        "captured": Hold.Status.CAPTURED.value,
        "pending": Hold.Status.PENDING.value,
        "amount": amount_micros,
        "released": hold.amount_micros,
        "caller": hold.account_id,
        "api_call": LedgerEntry.Type.API_CALL.value,
        "now": now,
        "hold": hold.pk,
        "description": description,
        "metadata": json.dumps(metadata),
        "event_ref": event_ref,
        "receipt_accounts": len({account_id for account_id, *_ in receipts}),
    }
    rows = []
    for index, (account_id, entry_type, amount, role) in enumerate(receipts):
        rows.append(
            f"(%(account{index})s::bigint, %(type{index})s::varchar, %(amount{index})s::bigint, "
            f"%(role{index})s::varchar)"
        )
        params |= {
            f"account{index}": account_id,
            f"type{index}": entry_type,
            f"amount{index}": amount,
            f"role{index}": role,
        }
    record_usage = ""
    if usage is not None:
        record_usage = f""",
            recorded AS (
                INSERT INTO {USAGE} (account_id, api_key_id, request_id, api_slug, path, method,
                                     status, mode, cost_micros, latency_ms, created_at,
                                     endpoint_id, params_fingerprint, billing_root_request_id)
                SELECT %(u_account)s::bigint, %(u_key)s::bigint, %(u_request)s::varchar,
                       %(u_api)s::varchar, %(u_path)s::varchar, %(u_method)s::varchar,
                       %(u_status)s::varchar, %(u_mode)s::varchar, %(u_cost)s::bigint,
                       %(u_latency)s::integer, %(u_created)s::timestamptz,
                       %(u_endpoint)s::bigint, %(u_fingerprint)s::varchar, %(u_root)s::varchar
                FROM claimed
                RETURNING id
            )"""
        params |= {
            "u_account": usage.account_id,
            "u_key": usage.api_key_id,
            "u_request": usage.request_id,
            "u_api": usage.api_slug,
            "u_path": usage.path,
            "u_method": usage.method,
            "u_status": usage.status,
            "u_mode": usage.mode,
            "u_cost": usage.cost_micros,
            "u_latency": usage.latency_ms,
            "u_created": usage.created_at,
            "u_endpoint": usage.endpoint_id,
            "u_fingerprint": usage.params_fingerprint,
            "u_root": usage.billing_root_request_id,
        }
    # The caller's account is locked first, then the hold: the order every other writer
    # (reservations, releases, the sweeper, the roll-up) takes them in, so none can deadlock.
    # The receiving accounts are only counted, never locked. The roll-up of the caller's own
    # receipts comes after its lock (so it never races the roll-up command), and sums what its
    # UPDATE marks: a receipt rolled up meanwhile by the command is skipped by that UPDATE.
    sql = f"""
        WITH receipts (account_id, type, amount, role) AS (VALUES {", ".join(rows)}),
        locked AS (
            SELECT id FROM {ACCOUNTS} WHERE id = %(caller)s::bigint FOR NO KEY UPDATE
        ),
        present AS (
            SELECT count(*) AS accounts FROM {ACCOUNTS}
            WHERE id IN (SELECT account_id FROM receipts)
        ),
        claimed AS (
            UPDATE {HOLDS} SET status = %(captured)s::varchar,
                               captured_micros = %(amount)s::bigint,
                               settled_at = %(now)s::timestamptz
            WHERE id = %(hold)s::bigint AND status = %(pending)s::varchar
              AND EXISTS (SELECT 1 FROM locked)
              AND (SELECT accounts FROM present) = %(receipt_accounts)s::bigint
            RETURNING id
        ),
        rolled AS (
            UPDATE {ENTRIES} SET rolled_up = true
            WHERE account_id = %(caller)s::bigint AND NOT rolled_up
              AND EXISTS (SELECT 1 FROM claimed)
            RETURNING amount_micros
        ),
        moved AS (
            UPDATE {ACCOUNTS}
            SET rolled_up_micros = rolled_up_micros - %(amount)s::bigint
                    + (SELECT coalesce(sum(amount_micros), 0) FROM rolled),
                held_micros = held_micros - %(released)s::bigint
            WHERE id = %(caller)s::bigint AND EXISTS (SELECT 1 FROM claimed)
            RETURNING rolled_up_micros
        ),
        booked AS (
            INSERT INTO {ENTRIES} (account_id, type, amount_micros, balance_after_micros,
                                   rolled_up, description, metadata, event_ref, idempotency_ref,
                                   created_at)
            SELECT %(caller)s::bigint, %(api_call)s::varchar, -%(amount)s::bigint,
                   moved.rolled_up_micros, true, %(description)s::varchar,
                   %(metadata)s::jsonb, %(event_ref)s::varchar,
                   %(event_ref)s::varchar || ':caller', %(now)s::timestamptz
            FROM moved WHERE %(amount)s::bigint <> 0
            UNION ALL
            SELECT receipts.account_id, receipts.type, receipts.amount, NULL::bigint, false,
                   %(description)s::varchar, %(metadata)s::jsonb, %(event_ref)s::varchar,
                   %(event_ref)s::varchar || ':' || receipts.role, %(now)s::timestamptz
            FROM receipts CROSS JOIN claimed
            WHERE receipts.amount <> 0
            RETURNING id
        ){record_usage}
        SELECT (SELECT count(*) FROM claimed), (SELECT accounts FROM present)
    """
    return sql, params
