import re

import pytest
from django.core.management import CommandError, call_command

from credits.models import Account
from gateway.models import ApiKey, Membership, Organization, User
from tests.factories import api_key_row


def test_the_command_creates_the_user_and_prints_only_the_key(db, capsys, client_for):
    call_command("create_api_key", "--email", "Dana@Example.com", "--mode", "test", "--name", "ci")
    printed = capsys.readouterr().out.strip()
    assert re.fullmatch(r"gw_test_[A-Za-z0-9_-]{32,}", printed)
    user = User.objects.get(email="dana@example.com")
    assert api_key_row(printed).user == user
    assert api_key_row(printed).name == "ci"
    assert client_for(printed).get("/v1/whoami").json()["data"]["key"]["mode"] == "test"


def test_the_command_creates_an_organization_owned_by_the_user(db, capsys):
    call_command("create_api_key", "--email", "erin@example.com", "--org", "globex")
    printed = capsys.readouterr().out.strip()
    organization = Organization.objects.get(slug="globex")
    assert api_key_row(printed).organization == organization
    assert api_key_row(printed).mode == ApiKey.Mode.LIVE
    membership = Membership.objects.get(organization=organization)
    assert (membership.user.email, membership.role) == ("erin@example.com", "owner")


def test_the_command_refuses_an_outsider_of_an_existing_organization(alice, charlie):
    with pytest.raises(CommandError, match="not a member"):
        call_command("create_api_key", "--email", charlie.user.email, "--org", "acme")
    assert not ApiKey.objects.filter(organization=alice.organization).exclude(name="org").exists()


def test_create_api_key_can_fund_the_new_key(db, capsys, client_for):
    call_command("create_api_key", "--email", "funded@example.com", "--credits-usd", "10")
    secret = capsys.readouterr().out.strip()
    assert client_for(secret).get("/v1/credits/balance").json()["balance"] == "$10.00"
    assert Account.objects.get(user=api_key_row(secret).user).balance_micros == 10_000_000
    call_command("check_ledger")
