"""Settlements per second as clients are added: the reserve and capture statements of a paid
call (credits.settlement_sql, no HTTP), from N processes with distinct callers paying one
provider, on a throwaway PostgreSQL database.

Three ways of capturing, each at 1, 16 and 64 clients, in one run:
  - before: the capture as it was, locking and updating the caller's, the provider's and the
    platform's account rows (a copy of that statement is kept below, BEFORE_CAPTURE);
  - sharded: the same statement with the provider's revenue and the platform's fee spread over
    SHARDS sub-accounts each, picked by caller, the alternative to receipts;
  - after: the project's capture, which locks only the caller and appends the revenue and the
    fee as receipts.
Each client reserves then captures a hold (with its usage event) in a loop for
SETTLEMENT_SECONDS (default 8) after a second of warm-up; the figure is captures committed per
second across all clients, beside the share of the clients' running statements that were
waiting for a lock (sampled every 50 ms). Ends with roll_up_receipts and check_ledger. Prints
figures; asserts nothing.

The clients are Python processes on the same cores as PostgreSQL, so a figure is what this
machine settles, client CPU included; the ratio between the rows is the point.

Environment: BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
SETTLEMENT_SECONDS, SETTLEMENT_CLIENTS (default "1,16,64").
"""

import json
import multiprocessing
import os
import threading
import time
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


def _before_capture(hold, *, amount, legs, event_ref, now) -> None:
    from credits import settlement_sql

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
            f"released{index}": hold.amount_micros if account_id == hold.account_id else 0,
            f"role{index}": role,
        }
    params |= {
        "amount": amount,
        "now": now,
        "hold": hold.pk,
        "accounts": len(rows),
        "description": "bench",
        "metadata": json.dumps({"requestId": hold.request_id}),
        "event_ref": event_ref,
        "u_account": hold.account_id,
        "u_request": hold.request_id,
    }
    settlement_sql._execute(BEFORE_CAPTURE.format(rows=", ".join(rows)), params)


def _settle_once(way: str, run: str, caller_id: int, number: int, accounts: dict) -> None:
    """Reserve and capture one hold of the caller, the way ``way`` captures."""
    from django.utils import timezone

    from credits import settlement_sql
    from credits.models import Hold, LedgerEntry, UsageEvent
    from credits.services.ledger import fee_split

    now = timezone.now()
    request_id = f"{run}_{caller_id}_{number}"
    hold = Hold(
        account_id=caller_id,
        request_id=request_id,
        amount_micros=PRICE_MICROS,
        description="bench",
        metadata={},
        created_at=now,
        expires_at=now + timedelta(minutes=5),
    )
    if not settlement_sql.reserve(hold):
        raise SystemExit(f"caller {caller_id} ran out of funds")
    revenue, fee = fee_split(amount_micros=PRICE_MICROS, has_provider=True)
    event_ref = f"call:{request_id}"
    if way == "after":
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
        settlement_sql.capture(
            hold=hold,
            amount_micros=PRICE_MICROS,
            receipts=[
                (accounts["platform"][0], LedgerEntry.Type.FEE, fee, "platform"),
                (accounts["provider"][0], LedgerEntry.Type.REVENUE, revenue, "provider"),
            ],
            description="bench",
            metadata={"requestId": request_id},
            event_ref=event_ref,
            now=now,
            usage=usage,
        )
        return
    shard = caller_id % SHARDS if way == "sharded" else 0
    _before_capture(
        hold,
        amount=PRICE_MICROS,
        legs=[
            (caller_id, LedgerEntry.Type.API_CALL, -PRICE_MICROS, "caller"),
            (accounts["platform"][shard], LedgerEntry.Type.FEE, fee, "platform"),
            (accounts["provider"][shard], LedgerEntry.Type.REVENUE, revenue, "provider"),
        ],
        event_ref=event_ref,
        now=now,
    )


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


def _lock_waits(stop, samples: list) -> None:
    """Sample, until ``stop`` is set, how many of the benchmark's connections are running a
    statement and how many of those wait for a lock (a row, a transaction): the share that
    waits is what a shared row costs, whatever the machine's speed."""
    import psycopg

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


def _measure(way: str, clients: int, callers: list[int], accounts: dict) -> tuple[float, float]:
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
    stop, samples = threading.Event(), []
    sampler = threading.Thread(target=_lock_waits, args=(stop, samples))
    sampler.start()
    total = sum(results.get(timeout=SECONDS + 120) for _ in processes)
    stop.set()
    sampler.join()
    for process in processes:
        process.join()
    active = sum(running for running, _ in samples)
    waiting = sum(locked for _, locked in samples)
    return total / SECONDS, 100 * waiting / active if active else 0.0


def _accounts(callers: int) -> tuple[list[int], dict]:
    """Funded callers, the provider's and the platform's accounts (and their shards)."""
    from credits.models import Account
    from credits.services.accounts import account_for_user, account_platform
    from credits.services.ledger import credits_grant, receipts_roll_up
    from gateway.models import Organization, User

    caller_ids = []
    for number in range(callers):
        user = User.objects.create_user(email=f"caller{number}@bench.example", password=None)
        account = account_for_user(user=user)
        credits_grant(account=account, amount_micros=FUNDS_MICROS, reason="bench funds")
        caller_ids.append(account.pk)
    providers = []
    for shard in range(SHARDS):
        organization = Organization.objects.create(name=f"Provider {shard}", slug=f"prov-{shard}")
        providers.append(Account.objects.create(kind="organization", organization=organization).pk)
    # One platform account exists; its shards stand in as organization accounts, which is how
    # a sharded platform's extra rows would be locked and updated.
    platform = [account_platform().pk]
    for shard in range(1, SHARDS):
        organization = Organization.objects.create(name=f"Fee {shard}", slug=f"fee-{shard}")
        platform.append(Account.objects.create(kind="organization", organization=organization).pk)
    receipts_roll_up()
    return caller_ids, {"provider": providers, "platform": platform}


def main() -> None:
    harness.argument_parser(__doc__).parse_args()
    with harness.django_database(DB_NAME):
        from django.core.management import call_command
        from django.db import connections

        callers, accounts = _accounts(max(CLIENTS))
        connections.close_all()
        print(f"settlements per second ({SECONDS:g} s per figure, {PRICE_MICROS} micros each)")
        print("and the share of running statements that wait for a lock")
        print(f"{'clients':>8}" + "".join(f" {way:>18}" for way in WAYS))
        for clients in CLIENTS:
            figures = [_measure(way, clients, callers, accounts) for way in WAYS]
            print(
                f"{clients:>8}"
                + "".join(f" {rate:>9,.0f} {f'({waits:.0f}%)':>8}" for rate, waits in figures)
            )
        started = time.monotonic()
        call_command("roll_up_receipts")
        print(f"roll_up_receipts took {time.monotonic() - started:.2f} s")
        call_command("check_ledger")


WAYS = ["before", "sharded", "after"]

if __name__ == "__main__":
    main()
