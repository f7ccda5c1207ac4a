import pytest
from django.core.management import CommandError, call_command

from credits.models import Account, Hold, LedgerEntry
from credits.services.holds import hold_reserve
from tests.factories import fund


def test_clean_books_pass(alice, capsys):
    account = fund(alice.user, 10_000)
    hold_reserve(account=account, amount_micros=5_000, request_id="run_ok")
    call_command("check_ledger")
    assert "Ledger clean" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("tamper", "drift"),
    [
        (lambda a: Account.objects.filter(pk=a.pk).update(rolled_up_micros=9_999), "balance"),
        (lambda a: Account.objects.filter(pk=a.pk).update(held_micros=0), "held"),
        (lambda a: Hold.objects.update(status="released"), "held"),
        (lambda a: LedgerEntry.objects.filter(account=a).update(amount_micros=20_000), "event"),
        # A receipt marked rolled up without its amount reaching the rolled-up balance.
        (lambda a: LedgerEntry.objects.filter(rolled_up=False).update(rolled_up=True), "balance"),
    ],
)
def test_any_drift_is_reported_and_fails(alice, capsys, tamper, drift):
    account = fund(alice.user, 10_000)
    hold_reserve(account=account, amount_micros=5_000, request_id="run_ok")
    tamper(account)
    with pytest.raises(CommandError, match="discrepanc"):
        call_command("check_ledger")
    assert f"DRIFT {drift}" in capsys.readouterr().err
