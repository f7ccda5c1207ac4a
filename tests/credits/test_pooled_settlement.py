"""With DATABASE_POOL, a worker's requests share pooled connections, and a connection given back
to the pool at the end of a request keeps the settlement statements it prepared."""

import json
import os
import subprocess
import sys

import pytest
from django.db import connection

from credits.models import LedgerEntry
from tests.factories import fund, make_persona
from tests.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)

# Settles N calls, giving the connection back after each as Django does at a request's end,
# then reports which server processes served them and how often each statement ran prepared.
SETTLE_AND_REPORT = """
import json, os, django
django.setup()
from django.db import connection
from credits.services.holds import hold_capture, hold_reserve

backends = set()
for number in range(int(os.environ["CALLS"])):
    hold = hold_reserve(
        account=int(os.environ["ACCOUNT_ID"]), amount_micros=1_000, request_id=f"run_pool_{number}"
    )
    hold_capture(hold=hold, amount_micros=1_000, provider_account=None, description="pooled")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backends.add(cursor.fetchone()[0])
        cursor.execute(
            "SELECT (regexp_match(statement, 'WITH\\s+(\\w+)'))[1], generic_plans + custom_plans "
            "FROM pg_prepared_statements WHERE statement LIKE '%WITH %'"
        )
        prepared = dict(cursor.fetchall())
    connection.close()
print(json.dumps({"backends": len(backends), "prepared": prepared}))
"""


def _settle_in_a_process(account_id: int, calls: int, **environment) -> dict:
    settings_dict = connection.settings_dict
    database_url = (
        f"postgres://{settings_dict['USER']}@{settings_dict['HOST']}:{settings_dict['PORT']}"
        f"/{settings_dict['NAME']}"
    )
    finished = subprocess.run(
        [sys.executable, "-c", SETTLE_AND_REPORT],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "gateway.settings",
            "DATABASE_URL": database_url,
            "ACCOUNT_ID": str(account_id),
            "CALLS": str(calls),
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert finished.returncode == 0, finished.stderr
    return json.loads(finished.stdout.strip().splitlines()[-1])


def test_a_pooled_connection_keeps_its_prepared_settlement_statements():
    account = fund(make_persona("pooled@example.com").user, 1_000_000)

    report = _settle_in_a_process(
        account.pk, 5, DATABASE_POOL="True", DATABASE_POOL_MIN_SIZE="1", DATABASE_POOL_MAX_SIZE="1"
    )

    # A request reserves outside a transaction: the statement whose first CTE is "asynchronous".
    assert report == {"backends": 1, "prepared": {"asynchronous": 5, "receipts": 5}}
    assert LedgerEntry.objects.filter(account=account, type="api_call").count() == 5


def test_without_the_pool_or_kept_connections_each_request_prepares_anew():
    account = fund(make_persona("unpooled@example.com").user, 1_000_000)

    report = _settle_in_a_process(account.pk, 3, DATABASE_POOL="False", DATABASE_CONN_MAX_AGE="0")

    assert report["backends"] == 3
    assert report["prepared"] == {"asynchronous": 1, "receipts": 1}
