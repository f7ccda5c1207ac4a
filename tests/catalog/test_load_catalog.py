import shutil

import pytest
from django.core.management import CommandError, call_command

from catalog.models import ProviderApi
from tests.catalog.conftest import DOCUMENTS

pytestmark = pytest.mark.django_db


def test_it_loads_every_provider_document_of_the_directory(tmp_path, capsys):
    shutil.copy(DOCUMENTS / "providers" / "weather.yaml", tmp_path / "weather.yaml")
    shutil.copy(DOCUMENTS / "hunter-oas30.yaml", tmp_path / "hunter.yaml")
    call_command("load_catalog", "--dir", str(tmp_path))
    assert set(ProviderApi.objects.values_list("slug", flat=True)) == {"weather", "hunter"}
    forecast = ProviderApi.objects.get(slug="weather").endpoints.get()
    assert (forecast.path, forecast.price_micros) == ("/forecast", 2_000)
    assert "2 documents imported, 0 failed" in capsys.readouterr().out


def test_loading_twice_changes_nothing(tmp_path):
    shutil.copy(DOCUMENTS / "providers" / "weather.yaml", tmp_path / "weather.yaml")
    call_command("load_catalog", "--dir", str(tmp_path))
    first = list(ProviderApi.objects.values_list("pk", "updated_at"))
    call_command("load_catalog", "--dir", str(tmp_path))
    assert list(ProviderApi.objects.values_list("pk", "updated_at")) == first


@pytest.mark.parametrize("layout", ["missing", "empty"])
def test_it_succeeds_when_there_is_nothing_to_load(tmp_path, capsys, layout):
    directory = tmp_path / "providers"
    if layout == "empty":
        directory.mkdir()
    call_command("load_catalog", "--dir", str(directory))
    assert "No provider documents to load" in capsys.readouterr().out
    assert ProviderApi.objects.count() == 0


def test_a_broken_document_is_reported_and_the_others_load(tmp_path, capsys):
    shutil.copy(DOCUMENTS / "providers" / "weather.yaml", tmp_path / "weather.yaml")
    shutil.copy(DOCUMENTS / "broken.yaml", tmp_path / "broken.yaml")
    call_command("load_catalog", "--dir", str(tmp_path))
    assert "broken.yaml: invalid YAML" in capsys.readouterr().err
    assert ProviderApi.objects.filter(slug="weather").exists()
    with pytest.raises(CommandError, match="1 provider documents failed"):
        call_command("load_catalog", "--dir", str(tmp_path), "--strict")
