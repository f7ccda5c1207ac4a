import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.management import CommandError, call_command

from credits.models import LedgerEntry
from credits.services.accounts import account_for_user
from credits.services.holds import hold_capture, hold_reserve
from gateway.models import User
from tests.factories import fund, provider_account


@pytest.fixture
def operator(db, client):
    staff = User.objects.create_superuser(email="ops@example.com", password="x")
    client.force_login(staff)
    return client


def test_the_admin_grants_credits_with_an_amount_and_a_reason(operator, alice, client_for):
    account = account_for_user(user=alice.user)
    url = "/admin/credits/account/"

    form_page = operator.post(url, {"action": "grant_credits", ACTION_CHECKBOX_NAME: [account.pk]})
    assert form_page.status_code == 200
    assert b"Grant credits" in form_page.content

    operator.post(
        url,
        {
            "action": "grant_credits",
            ACTION_CHECKBOX_NAME: [account.pk],
            "apply": "1",
            "amount_usd": "25",
            "reason": "welcome",
        },
    )

    entry = LedgerEntry.objects.get(account=account)
    assert (entry.type, entry.amount_micros, entry.description) == ("grant", 25_000_000, "welcome")
    assert client_for(alice.live_key).get("/v1/credits/balance").json()["balance"] == "$25.00"


def test_the_admin_grant_form_refuses_a_bad_amount(operator, alice):
    account = account_for_user(user=alice.user)
    page = operator.post(
        "/admin/credits/account/",
        {
            "action": "grant_credits",
            ACTION_CHECKBOX_NAME: [account.pk],
            "apply": "1",
            "amount_usd": "-3",
            "reason": "oops",
        },
    )
    assert b"must be positive" in page.content
    assert not LedgerEntry.objects.exists()


def test_the_admin_refunds_a_call_once(operator, alice):
    account = fund(alice.user, 100_000)
    hold_reserve(account=account, amount_micros=10_000, request_id="run_adm")
    hold_capture(
        request_id="run_adm",
        amount_micros=10_000,
        provider_account=provider_account(),
        description="call",
    )
    entry = LedgerEntry.objects.get(type="api_call")
    url = "/admin/credits/ledgerentry/"

    operator.post(url, {"action": "refund", ACTION_CHECKBOX_NAME: [entry.pk]})
    second = operator.post(url, {"action": "refund", ACTION_CHECKBOX_NAME: [entry.pk]}, follow=True)

    assert b"already refunded" in second.content
    account.refresh_from_db()
    assert account.balance_micros == 100_000
    assert LedgerEntry.objects.filter(type="refund").count() == 3


def test_the_ledger_is_read_only_in_the_admin(operator, alice):
    fund(alice.user, 1_000)
    entry = LedgerEntry.objects.filter(account__user=alice.user).get()
    assert operator.get(f"/admin/credits/ledgerentry/{entry.pk}/delete/").status_code == 403
    assert operator.get("/admin/credits/ledgerentry/add/").status_code == 403


def test_grant_credits_command_books_a_grant(alice, capsys, client_for):
    call_command("grant_credits", "--email", alice.user.email, "--usd", "7.5", "--reason", "promo")
    assert "Granted $7.50" in capsys.readouterr().out
    assert client_for(alice.live_key).get("/v1/credits/balance").json()["balance"] == "$7.50"


def test_grant_credits_command_credits_an_organization(alice, client_for):
    call_command("grant_credits", "--org", "acme", "--usd", "2", "--reason", "promo")
    assert client_for(alice.org_key).get("/v1/credits/balance").json()["balance"] == "$2.00"


@pytest.mark.parametrize(
    "args",
    [
        ["--email", "nobody@example.com", "--usd", "1"],
        ["--org", "nope", "--usd", "1"],
        ["--email", "alice@example.com", "--usd", "0"],
        ["--email", "alice@example.com", "--usd", "1.0000001"],
    ],
)
def test_grant_credits_command_refuses_bad_input(alice, args):
    with pytest.raises(CommandError):
        call_command("grant_credits", *args, "--reason", "r")
    assert not LedgerEntry.objects.exists()


@pytest.mark.parametrize("reason", ["", "   ", "r" * 301])
def test_grant_credits_command_refuses_a_reason_it_cannot_show(alice, reason):
    with pytest.raises(CommandError, match="--reason must be 1 to 300 characters"):
        call_command(
            "grant_credits", "--email", "alice@example.com", "--usd", "1", "--reason", reason
        )
    assert not LedgerEntry.objects.exists()
