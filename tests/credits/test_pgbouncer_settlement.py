"""Behind PgBouncer in transaction mode (1.21 or later, max_prepared_statements set), workers of
several processes share one PostgreSQL connection, and the settlement statements they prepare
stay prepared on it: each is parsed and planned once for every call of every worker.

`make test` builds the PgBouncer this runs (var/pgbouncer, see the Makefile); PGBOUNCER names
another binary."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from credits.models import LedgerEntry
from tests.factories import fund, make_persona
from tests.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

PGBOUNCER = Path(os.environ.get("PGBOUNCER", ROOT / "var" / "pgbouncer" / "bin" / "pgbouncer"))
PROCESSES = 4
CALLS = 6
PRICE = 1_000

# Settles CALLS calls on one account through DATABASE_URL, giving the connection back to the
# pool after each as Django does at a request's end; reports the server processes that served it.
SETTLE = """
import json, os, django
django.setup()
from django.db import connection
from credits.services.holds import hold_capture, hold_reserve

account, backends = int(os.environ["ACCOUNT_ID"]), set()
for number in range(int(os.environ["CALLS"])):
    hold = hold_reserve(
        account=account, amount_micros=int(os.environ["PRICE"]),
        request_id=f"run_bouncer_{account}_{number}",
    )
    hold_capture(
        hold=hold, amount_micros=int(os.environ["PRICE"]), provider_account=None,
        description="through pgbouncer",
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backends.add(cursor.fetchone()[0])
    connection.close()
print(json.dumps(sorted(backends)))
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def pgbouncer():
    """The address of a PgBouncer in transaction mode with one server connection in front of
    the test database."""
    if not PGBOUNCER.is_file():
        pytest.skip(f"no PgBouncer at {PGBOUNCER}: `make test` builds it")
    database = connection.settings_dict
    port = _free_port()
    # PgBouncer refuses to run as root; the user it runs as must read its files.
    directory = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    directory.chmod(0o755)
    (directory / "users.txt").write_text(f'"{database["USER"]}" ""\n')
    (directory / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={database['HOST']} port={database['PORT']}\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {directory / 'users.txt'}\n"
        "pool_mode = transaction\ndefault_pool_size = 1\nmax_prepared_statements = 100\n"
    )
    command = [str(PGBOUNCER), str(directory / "pgbouncer.ini")]
    if os.geteuid() == 0:
        command[1:1] = ["-u", "postgres"]
    bouncer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"postgres://{database['USER']}@127.0.0.1:{port}/{database['NAME']}"
    try:
        _wait_for(url, bouncer)
        yield url
    finally:
        bouncer.terminate()
        bouncer.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


def _wait_for(url: str, bouncer: subprocess.Popen) -> None:
    deadline = time.monotonic() + 15
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if bouncer.poll() is not None or time.monotonic() > deadline:
                bouncer.kill()
                pytest.fail(f"PgBouncer did not start: {bouncer.communicate()[0]}")
            time.sleep(0.1)


def _settling(url: str, account_id: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SETTLE],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "DATABASE_URL": url,
            "DATABASE_POOL": "True",
            "DATABASE_POOL_MIN_SIZE": "1",
            "DATABASE_POOL_MAX_SIZE": "2",
            "DATABASE_DISABLE_SERVER_SIDE_CURSORS": "True",
            "ACCOUNT_ID": str(account_id),
            "CALLS": str(CALLS),
            "PRICE": str(PRICE),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_workers_behind_pgbouncer_share_one_connection_and_its_prepared_statements(pgbouncer):
    funded = 1_000_000
    accounts = [
        fund(make_persona(f"bouncer{n}@example.com").user, funded) for n in range(PROCESSES)
    ]

    processes = [_settling(pgbouncer, account.pk) for account in accounts]
    backends = set()
    for process in processes:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
        backends.update(json.loads(out.strip().splitlines()[-1]))

    for account in accounts:
        account.refresh_from_db()
        assert account.balance_micros == funded - CALLS * PRICE
        charges = LedgerEntry.objects.filter(account=account, type="api_call")
        assert charges.count() == CALLS
    assert len(backends) == 1
    # Asked through PgBouncer, the one server connection lists what it has prepared: each
    # settlement statement once, run for every call of every process.
    with psycopg.connect(pgbouncer) as bounced:
        prepared = {
            name: (statements, runs)
            for name, statements, runs in bounced.execute(
                "SELECT (regexp_match(statement, 'WITH\\s+(\\w+)'))[1], "
                "count(*), sum(generic_plans + custom_plans) FROM pg_prepared_statements "
                "WHERE statement LIKE '%WITH %' GROUP BY 1"
            ).fetchall()
        }
        [[backend]] = bounced.execute("SELECT pg_backend_pid()").fetchall()
    assert backends == {backend}
    calls = PROCESSES * CALLS
    assert prepared == {"asynchronous": (1, calls), "receipts": (1, calls)}
    call_command("check_ledger")
