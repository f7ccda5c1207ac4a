import re

import pytest
from django.db import connection

from gateway.services import api_key_create
from tests.factories import api_key_row


def all_stored_text() -> str:
    """Every row of every table, as PostgreSQL prints it."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT CAST(t AS text) FROM "{table}" t')
            chunks.extend(row[0] for row in cursor.fetchall())
    return "\n".join(chunks)


@pytest.mark.parametrize("mode", ["live", "test"])
def test_a_new_key_has_the_documented_shape(alice, mode):
    api_key, secret = api_key_create(mode=mode, user=alice.user, name="ci")
    assert re.fullmatch(rf"gw_{mode}_[A-Za-z0-9_-]{{32,}}", secret)
    assert api_key.prefix == secret[:12]
    assert api_key.last4 == secret[-4:]
    assert api_key.masked == f"{secret[:12]}…{secret[-4:]}"


def test_the_database_never_contains_a_full_key(alice, bob, charlie):
    stored = all_stored_text()
    for secret in [alice.live_key, alice.test_key, alice.org_key, bob.live_key, charlie.test_key]:
        assert secret[12:] not in stored
        assert api_key_row(secret).key_hash in stored


def test_every_key_is_different(alice):
    secrets = {api_key_create(mode="live", user=alice.user)[1] for _ in range(50)}
    assert len(secrets) == 50


def test_a_key_needs_exactly_one_owner(alice):
    with pytest.raises(Exception, match="exactly one"):
        api_key_create(mode="live", user=alice.user, organization=alice.organization)
    with pytest.raises(Exception, match="exactly one"):
        api_key_create(mode="live")
