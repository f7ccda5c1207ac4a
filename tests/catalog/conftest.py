from pathlib import Path

import pytest

from catalog.search import search_index_reset
from catalog.services import openapi_import

DOCUMENTS = Path(__file__).parent / "documents"
CORPUS = (
    Path(__file__).resolve().parents[3] / "shared" / "corpus" / "openapi-directory-lite" / "specs"
)
ONE_CENT = 10_000


@pytest.fixture
def fresh_search_index():
    """No index left by another test, and none left for the next."""
    search_index_reset()
    yield
    search_index_reset()


def import_documents(*names: str, **options):
    """Import documents of tests/catalog/documents by file name."""
    options.setdefault("default_price_micros", ONE_CENT)
    return openapi_import(locations=[str(DOCUMENTS / name) for name in names], **options)


@pytest.fixture
def hunter(db):
    summary = import_documents("hunter-oas30.yaml")
    assert not summary.errors, summary.errors
    return summary


def assert_matches_documented_shape(serializer_class, body: dict) -> None:
    """The answer validates against the view's output serializer, and has no undocumented key."""
    from rest_framework import serializers

    serializer = serializer_class(data=body)
    assert serializer.is_valid(), serializer.errors

    def undocumented(field, value, where):
        if isinstance(field, serializers.ListSerializer):
            for index, item in enumerate(value):
                yield from undocumented(field.child, item, f"{where}[{index}]")
        elif isinstance(field, serializers.Serializer) and isinstance(value, dict):
            for key, item in value.items():
                if key not in field.fields:
                    yield f"{where}.{key}"
                else:
                    yield from undocumented(field.fields[key], item, f"{where}.{key}")

    assert list(undocumented(serializer_class(), body, "$")) == []
