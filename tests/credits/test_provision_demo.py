import re

from django.core.management import call_command

from gateway.models import ApiKey

KEY = re.compile(r"gw_(live|test)_[A-Za-z0-9_-]{32,}")


def test_the_demo_keys_are_printed_once_and_rotated_on_request(db, capsys, client_for):
    call_command("provision_demo")
    first = KEY.findall(capsys.readouterr().out)
    assert sorted(first) == ["live", "test"]

    call_command("provision_demo")
    again = capsys.readouterr().out
    assert KEY.search(again) is None
    assert "already has its keys" in again

    call_command("provision_demo", "--rotate")
    rotated = [m.group(0) for m in KEY.finditer(capsys.readouterr().out)]
    assert len(rotated) == 2
    assert ApiKey.objects.filter(user__email="demo@example.com", revoked_at=None).count() == 2
    for secret in rotated:
        assert client_for(secret).get("/v1/whoami").status_code == 200
    balance = client_for(rotated[0]).get("/v1/credits/balance").json()["balance"]
    assert balance == "$10.00"  # granted once, not once per run
