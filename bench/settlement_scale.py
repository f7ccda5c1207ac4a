"""Settlements per second as clients are added: the reserve and capture statements of a paid
call (credits.settlement_sql, no HTTP), with distinct callers paying one provider, on a
throwaway PostgreSQL database.

Four ways of settling, each at 1, 16 and 64 clients, in one run:
  - before: the capture as it was, locking and updating the caller's, the provider's and the
    platform's account rows (a copy of that statement is kept below, BEFORE_CAPTURE);
  - sharded: the same statement with the provider's revenue and the platform's fee spread over
    SHARDS sub-accounts each, picked by caller, the alternative to receipts;
  - receipts: the project's capture, which locks only the caller and appends the revenue and
    the fee as receipts, after a reservation that waits for its WAL flush;
  - after: the project's settlement as served, the reservation committing without waiting for
    its flush (settlement_sql.reserve_statement).
Each client reserves then captures a hold (with its usage event) in a loop for
SETTLEMENT_SECONDS (default 8) after a second of warm-up; the figure is captures committed per
second across all clients, beside the share of the clients' running statements that were
waiting for a lock (sampled every 50 ms). Between figures the receipts are rolled up (as
the roll-up command does every minute when served), the tables vacuumed and a checkpoint
taken. Ends with check_ledger. Prints figures; asserts nothing.

Two kinds of clients, each its own table:
  - pgbench: N connections from pgbench on two threads, running the same statements as
    prepared statements with the per-settlement values as pgbench variables. A client costs
    the cores next to nothing, so the figure is what PostgreSQL settles on this machine.
  - processes: N Python processes calling settlement_sql as the gateway does; they share the
    cores with PostgreSQL, so the figure is what this machine settles, client CPU included.
  - pooled (not run unless named): pgbench through the PgBouncer at SETTLEMENT_POOLER_URL
    (postgres://user@host:port, transaction mode), with SETTLEMENT_POOLED_PROTOCOL (default
    "extended": PgBouncer before 1.21 cannot keep protocol-level prepared statements in
    transaction mode; "prepared" from 1.21 on, with max_prepared_statements set, as the
    gateway runs its statements; `make pgbouncer` builds 1.24.1). Pointed at PostgreSQL
    itself, it measures that protocol without a pooler.

Environment: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
SETTLEMENT_SECONDS, SETTLEMENT_CLIENTS (default "1,16,64"), SETTLEMENT_WAYS (default
"before,sharded,receipts,after"), SETTLEMENT_DRIVERS (default "pgbench,processes").
"""

import contextlib
import json
import multiprocessing
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import harness

DB_NAME = "gw_bench_settlement"
SECONDS = float(os.environ.get("SETTLEMENT_SECONDS", "8"))
WARM_UP_SECONDS = 1.0
CLIENTS = [int(n) for n in os.environ.get("SETTLEMENT_CLIENTS", "1,16,64").split(",")]
SHARDS = 16
PRICE_MICROS = 1_000
FUNDS_MICROS = 10**12  # never the limit

# The capture statement before receipts, kept to measure against: every leg's account row is
# locked (in id order) and updated, and each entry carries its account's balance after it.
BEFORE_CAPTURE = """
    WITH legs (account_id, type, amount, released, role) AS (VALUES {rows}),
    locked AS (
        SELECT id FROM credits_account
        WHERE id IN (SELECT account_id FROM legs)
        ORDER BY id
        FOR NO KEY UPDATE
    ),
    claimed AS (
        UPDATE credits_hold SET status = 'captured', captured_micros = %(amount)s::bigint,
                                settled_at = %(now)s::timestamptz
        WHERE id = %(hold)s::bigint AND status = 'pending'
          AND (SELECT count(*) FROM locked) = %(accounts)s::bigint
        RETURNING id
    ),
    moved AS (
        UPDATE credits_account AS account
        SET rolled_up_micros = account.rolled_up_micros + legs.amount,
            held_micros = account.held_micros - legs.released
        FROM legs, claimed
        WHERE account.id = legs.account_id
        RETURNING account.id, account.rolled_up_micros
    ),
    booked AS (
        INSERT INTO credits_ledgerentry (account_id, type, amount_micros, balance_after_micros,
                                         rolled_up, description, metadata, event_ref,
                                         idempotency_ref, created_at)
        SELECT legs.account_id, legs.type, legs.amount, moved.rolled_up_micros, true,
               %(description)s::varchar, %(metadata)s::jsonb, %(event_ref)s::varchar,
               %(event_ref)s::varchar || ':' || legs.role, %(now)s::timestamptz
        FROM legs CROSS JOIN claimed LEFT JOIN moved ON moved.id = legs.account_id
        WHERE legs.amount <> 0
        RETURNING id
    ),
    recorded AS (
        INSERT INTO credits_usageevent (account_id, api_key_id, request_id, api_slug, path,
                                        method, status, mode, cost_micros, latency_ms,
                                        created_at, endpoint_id, params_fingerprint,
                                        billing_root_request_id)
        SELECT %(u_account)s::bigint, NULL::bigint, %(u_request)s::varchar, 'bench'::varchar,
               '/bench'::varchar, 'GET'::varchar, 'completed'::varchar, 'live'::varchar,
               %(amount)s::bigint, 1::integer, %(now)s::timestamptz, NULL::bigint,
               ''::varchar, %(u_request)s::varchar
        FROM claimed
        RETURNING id
    )
    SELECT (SELECT count(*) FROM claimed)
"""


def _statements(way: str, caller_id: int, request_id: str, hold_id: int, accounts: dict):
    """The reservation and the capture of one hold of ``caller_id``, the way ``way`` captures,
    as two (SQL, parameters) pairs; the capture names the hold ``hold_id``."""
    from django.utils import timezone

    from credits import settlement_sql
    from credits.models import Hold, LedgerEntry, UsageEvent
    from credits.services.ledger import fee_split

    now = timezone.now()
    hold = Hold(
        pk=hold_id,
        account_id=caller_id,
        request_id=request_id,
        amount_micros=PRICE_MICROS,
        description="bench",
        metadata={},
        created_at=now,
        expires_at=now + timedelta(minutes=5),
    )
    reserve = settlement_sql.reserve_statement(hold, durable=way != "after")
    revenue, fee = fee_split(amount_micros=PRICE_MICROS, has_provider=True)
    if way == "sharded":
        shard = caller_id % SHARDS
        provider, platform = accounts["providers"][shard], accounts["fees"][shard]
    else:
        provider, platform = accounts["providers"][0], accounts["platform"]
    event_ref = f"call:{request_id}"
    if way in ("receipts", "after"):
        usage = UsageEvent(
            account_id=caller_id,
            request_id=request_id,
            api_slug="bench",
            path="/bench",
            method="GET",
            status="completed",
            mode="live",
            cost_micros=PRICE_MICROS,
            latency_ms=1,
            created_at=now,
            billing_root_request_id=request_id,
        )
        capture = settlement_sql.capture_statement(
            hold=hold,
            amount_micros=PRICE_MICROS,
            receipts=[
                (platform, LedgerEntry.Type.FEE, fee, "platform"),
                (provider, LedgerEntry.Type.REVENUE, revenue, "provider"),
            ],
            description="bench",
            metadata={"requestId": request_id},
            event_ref=event_ref,
            now=now,
            usage=usage,
        )
        return reserve, capture
    legs = [
        (caller_id, LedgerEntry.Type.API_CALL, -PRICE_MICROS, "caller"),
        (platform, LedgerEntry.Type.FEE, fee, "platform"),
        (provider, LedgerEntry.Type.REVENUE, revenue, "provider"),
    ]
    rows, params = [], {}
    for index, (account_id, entry_type, leg_amount, role) in enumerate(sorted(legs)):
        rows.append(
            f"(%(account{index})s::bigint, %(type{index})s::varchar, %(amount{index})s::bigint, "
            f"%(released{index})s::bigint, %(role{index})s::varchar)"
        )
        params |= {
            f"account{index}": account_id,
            f"type{index}": entry_type,
            f"amount{index}": leg_amount,
            f"released{index}": PRICE_MICROS if account_id == caller_id else 0,
            f"role{index}": role,
        }
    params |= {
        "amount": PRICE_MICROS,
        "now": now,
        "hold": hold_id,
        "accounts": len(rows),
        "description": "bench",
        "metadata": json.dumps({"requestId": request_id}),
        "event_ref": event_ref,
        "u_account": caller_id,
        "u_request": request_id,
    }
    return reserve, (BEFORE_CAPTURE.format(rows=", ".join(rows)), params)


def _settle_once(way: str, run: str, caller_id: int, number: int, accounts: dict) -> None:
    """Reserve and capture one hold of the caller, the way ``way`` captures."""
    from credits import settlement_sql

    request_id = f"{run}_{caller_id}_{number}"
    reserve, _ = _statements(way, caller_id, request_id, 0, accounts)
    row = settlement_sql._execute(*reserve)
    if row is None:
        raise SystemExit(f"caller {caller_id} ran out of funds")
    _, capture = _statements(way, caller_id, request_id, row[0], accounts)
    settlement_sql._execute(*capture)


def _client(way, run, caller_id, accounts, barrier, start_at, results) -> None:
    from django.db import connections

    connections.close_all()  # the parent's connection is not this process's to use
    try:
        _settle_once(way, run, caller_id, -1, accounts)  # connect and prepare first
        barrier.wait(timeout=120)
        while start_at.value == 0.0 or time.monotonic() < start_at.value:
            time.sleep(0.001)
        counting_from = start_at.value + WARM_UP_SECONDS
        until = counting_from + SECONDS
        number = counted = 0
        while (now := time.monotonic()) < until:
            _settle_once(way, run, caller_id, number, accounts)
            number += 1
            if now >= counting_from:
                counted += 1
        results.put(counted)
    finally:
        connections.close_all()


@contextlib.contextmanager
def _lock_waits() -> Iterator[list]:
    """Sample, while inside, how many of the benchmark's connections are running a statement
    and how many of those wait for a lock (a row, a transaction): the share that waits is what
    a shared row costs, whatever the machine's speed."""
    import psycopg

    stop, samples = threading.Event(), []

    def sample() -> None:
        with psycopg.connect(harness.database_url(DB_NAME), autocommit=True) as connection:
            while not stop.wait(0.05):
                samples.append(
                    connection.execute(
                        "SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock') "
                        "FROM pg_stat_activity WHERE datname = %s AND state = 'active' "
                        "AND pid <> pg_backend_pid()",
                        [DB_NAME],
                    ).fetchone()
                )

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield samples
    finally:
        stop.set()
        sampler.join()


def _share_waiting(samples: list) -> float:
    active = sum(running for running, _ in samples)
    waiting = sum(locked for _, locked in samples)
    return 100 * waiting / active if active else 0.0


def _measure_processes(way: str, clients: int, callers: list[int], accounts: dict):
    """Settlements per second from ``clients`` Python processes, and the share waiting."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(clients + 1)
    start_at = context.Value("d", 0.0)
    results = context.Queue()
    processes = [
        context.Process(
            target=_client,
            args=(way, f"{way}{clients}", callers[n], accounts, barrier, start_at, results),
        )
        for n in range(clients)
    ]
    for process in processes:
        process.start()
    barrier.wait(timeout=120)
    start_at.value = time.monotonic() + 0.2
    with _lock_waits() as samples:
        total = sum(results.get(timeout=SECONDS + 120) for _ in processes)
    for process in processes:
        process.join()
    return total / SECONDS, _share_waiting(samples)


# What changes from one settlement to the next, in the pgbench script: the caller (the client's
# own), the request id (random, so unique), the hold the reservation returned, and the provider's
# and platform's accounts (the caller's shard when sharded). Sentinels stand for them in the
# statements built by _statements, and are replaced by pgbench variables.
PER_SETTLEMENT = {
    -101: ":v_caller",
    -102: ":v_provider",
    -103: ":v_platform",
    -104: ":hold_id",
    "@rid": ":v_rid",
    "call:@rid": "'call:' || :v_rid::varchar",
}


def _pgbench_sql(sql: str, params: dict, defines: dict) -> str:
    """``sql`` with its psycopg placeholders turned into pgbench variables: per-settlement values
    into the script's own, the rest into constants given to pgbench with -D (pgbench sends
    them as parameters of the prepared statement, like psycopg)."""
    # pgbench takes a colon followed by a name for a variable even in a string literal (the
    # capture's ':caller'): such a literal is split after its colon.
    sql = re.sub(r"'[^']*'", lambda literal: literal[0].replace(":", ":' || '"), sql)
    for name, value in params.items():
        if isinstance(value, (int, str)) and value in PER_SETTLEMENT:
            variable = PER_SETTLEMENT[value]
        elif value is None or value == "":  # pgbench takes neither as a -D value
            variable = "NULL" if value is None else "''"
        else:
            variable = f":p_{name}"
            defines[f"p_{name}"] = value.isoformat() if hasattr(value, "isoformat") else value
        if variable.startswith("'call"):
            sql = sql.replace(f"%({name})s::varchar", f"({variable})::varchar")
        sql = sql.replace(f"%({name})s", variable)
    return " ".join(sql.split())


def _pgbench_script(way: str, callers: list[int], accounts: dict) -> tuple[str, dict]:
    """The pgbench script of one settlement the way ``way`` captures, and its constants."""
    sentinels = {"providers": [-102] * SHARDS, "fees": [-103] * SHARDS, "platform": -103}
    (reserve, reserve_params), (capture, capture_params) = _statements(
        "before" if way == "sharded" else way, -101, "@rid", -104, sentinels
    )
    defines: dict = {}
    reserve = _pgbench_sql(reserve, reserve_params, defines)
    capture = _pgbench_sql(capture, capture_params, defines)
    first, providers, fees = callers[0], accounts["providers"][0], accounts["fees"][0]
    if way == "sharded":
        accounts_lines = (
            f"\\set v_shard :v_caller % {SHARDS}\n"
            f"\\set v_provider {providers} + :v_shard\n"
            f"\\set v_platform {fees} + :v_shard\n"
        )
    else:
        accounts_lines = f"\\set v_provider {providers}\n\\set v_platform {accounts['platform']}\n"
    script = (
        f"\\set v_caller {first} + :client_id\n"
        "\\set v_rid random(1, 9000000000000000000)\n"
        f"{accounts_lines}"
        f"{reserve} \\gset hold_\n"
        f"{capture};\n"
    )
    return script, defines


def _measure_pgbench(way: str, clients: int, callers: list[int], accounts: dict):
    """Settlements per second from ``clients`` pgbench connections on two threads, and the
    share waiting: the same statements, from a client that costs the cores next to nothing."""
    return _run_pgbench(way, clients, callers, accounts, os.environ["DATABASE_URL"], "prepared")


def _measure_pooled(way: str, clients: int, callers: list[int], accounts: dict):
    """The same as pgbench, through the PgBouncer at SETTLEMENT_POOLER_URL."""
    url = os.environ["SETTLEMENT_POOLER_URL"].rstrip("/") + "/" + DB_NAME
    return _run_pgbench(way, clients, callers, accounts, url, POOLED_PROTOCOL)


def _run_pgbench(way, clients, callers, accounts, url: str, protocol: str):
    import tempfile

    script, defines = _pgbench_script(way, callers, accounts)
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as file:
        file.write(script)
        file.flush()
        command = ["pgbench", "--no-vacuum", f"--protocol={protocol}", f"--file={file.name}"]
        command += [f"--client={clients}", f"--jobs={min(clients, 2)}"]
        command += [f"--define={name}={value}" for name, value in defines.items()]
        database = [url]
        _pgbench([*command, f"--time={WARM_UP_SECONDS:.0f}", *database])
        with _lock_waits() as samples:
            output = _pgbench([*command, f"--time={SECONDS:.0f}", *database])
    tps = re.search(r"^tps = ([\d.]+)", output, re.MULTILINE)
    return float(tps.group(1)), _share_waiting(samples)


def _pgbench(command: list[str]) -> str:
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode:
        raise SystemExit(f"pgbench failed:\n{ran.stderr}")
    return ran.stdout


DRIVERS = {
    "processes": _measure_processes,
    "pgbench": _measure_pgbench,
    "pooled": _measure_pooled,
}


def _accounts(callers: int) -> tuple[list[int], dict]:
    """Funded callers, the provider's and the platform's accounts and their shards; each kind
    has consecutive ids, which pgbench's script counts on."""
    from credits.models import Account
    from credits.services.accounts import account_for_user, account_platform
    from credits.services.ledger import credits_grant, receipts_roll_up
    from gateway.models import Organization, User

    platform = account_platform()
    caller_ids = []
    for number in range(callers):
        user = User.objects.create_user(email=f"caller{number}@bench.example", password=None)
        account = account_for_user(user=user)
        credits_grant(account=account, amount_micros=FUNDS_MICROS, reason="bench funds")
        caller_ids.append(account.pk)
    providers, fees = [], []
    for shard in range(SHARDS):
        organization = Organization.objects.create(name=f"Provider {shard}", slug=f"prov-{shard}")
        providers.append(Account.objects.create(kind="organization", organization=organization).pk)
    # The sharded platform's sub-accounts stand in as organization accounts, which is how its
    # extra rows would be locked and updated.
    for shard in range(SHARDS):
        organization = Organization.objects.create(name=f"Fee {shard}", slug=f"fee-{shard}")
        fees.append(Account.objects.create(kind="organization", organization=organization).pk)
    receipts_roll_up()
    for ids in (caller_ids, providers, fees):
        assert ids == list(range(ids[0], ids[0] + len(ids))), "ids not consecutive"
    return caller_ids, {"providers": providers, "fees": fees, "platform": platform.pk}


def _between_figures() -> None:
    """Roll the receipts up, as the roll-up command does every minute when served, then vacuum
    what the figure and the roll-up wrote and checkpoint, so that no figure starts with
    receipts waiting or pays for the previous one's autovacuum and checkpoint."""
    import psycopg
    from django.db import connections

    from credits.services.ledger import receipts_roll_up

    receipts_roll_up()
    connections.close_all()
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as connection:
        connection.execute(f"VACUUM (ANALYZE) {', '.join(TABLES)}")
        connection.execute("CHECKPOINT")


TABLES = ["credits_account", "credits_hold", "credits_ledgerentry", "credits_usageevent"]


def main() -> None:
    harness.argument_parser(__doc__).parse_args()
    with harness.django_database(DB_NAME):
        from django.core.management import call_command
        from django.db import connections

        callers, accounts = _accounts(max(CLIENTS))
        connections.close_all()
        print(f"settlements per second ({SECONDS:g} s per figure, {PRICE_MICROS} micros each)")
        print("and the share of running statements that wait for a lock")
        for driver in DRIVERS_RUN:
            print(f"\nclients: {driver}")
            print(f"{'clients':>8}" + "".join(f" {way:>18}" for way in WAYS))
            for clients in CLIENTS:
                figures = []
                for way in WAYS:
                    figures.append(DRIVERS[driver](way, clients, callers, accounts))
                    _between_figures()
                print(
                    f"{clients:>8}"
                    + "".join(f" {rate:>9,.0f} {f'({waits:.0f}%)':>8}" for rate, waits in figures),
                    flush=True,
                )
        call_command("check_ledger")


WAYS = os.environ.get("SETTLEMENT_WAYS", "before,sharded,receipts,after").split(",")
POOLED_PROTOCOL = os.environ.get("SETTLEMENT_POOLED_PROTOCOL", "extended")
DRIVERS_RUN = os.environ.get("SETTLEMENT_DRIVERS", "pgbench,processes").split(",")

if __name__ == "__main__":
    main()
