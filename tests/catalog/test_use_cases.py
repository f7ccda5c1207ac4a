"""Use cases: needs an endpoint answers in users' words, from its document's x-gateway-use-case
or the shipped sheet, embedded as a view of their own and searched."""

import hashlib

import numpy as np
import pytest
from django.core.management import call_command

from catalog import use_cases
from catalog.embeddings import DIMENSIONS, texts_embed
from catalog.models import Endpoint, EndpointEmbedding
from catalog.search import endpoint_search_texts_for, search_index_build
from catalog.services import endpoint_embeddings_refresh, endpoint_save, openapi_import
from catalog.texts import USE_CASE_CHARS, USE_CASES_MAX
from tests.catalog.conftest import ONE_CENT

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_search_index")]

RECIPIENTS = ("GET", "/envelopes/{envelopeId}/recipients")
DOCUMENTS = ("GET", "/envelopes/{envelopeId}/documents")
SIGNING_DESK = """openapi: 3.0.0
info: {title: Signing Desk, description: Electronic signature envelopes.}
servers: [{url: "https://api.signing.example"}]
paths:
  /envelopes/{envelopeId}/recipients:
    get:
      operationId: listRecipients
      summary: Retrieve envelope recipients
      x-gateway-use-case: "  who still has to sign\\n   my contract  "
      parameters: [{name: envelopeId, in: path, required: true, schema: {type: string}}]
  /envelopes/{envelopeId}/documents:
    get:
      operationId: listDocuments
      summary: Retrieve envelope documents
      parameters: [{name: envelopeId, in: path, required: true, schema: {type: string}}]
"""


@pytest.fixture
def sheet(tmp_path, monkeypatch):
    """A shipped sheet of the test's own, in place of the gateway's."""
    path = tmp_path / "use_cases.tsv"
    monkeypatch.setattr(use_cases, "SHEET", path)
    use_cases._sheet.cache_clear()
    yield path
    use_cases._sheet.cache_clear()


def signing_desk_import(tmp_path, text: str = SIGNING_DESK):
    document = tmp_path / "signing-desk.yaml"
    document.write_text(text)
    summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
    endpoint_embeddings_refresh()  # the import's own refresh waits for a commit
    return summary


def endpoint(method: str, path: str) -> Endpoint:
    return Endpoint.objects.select_related("api").get(
        api__slug="signing-desk", method=method, path=path
    )


def test_the_document_gives_the_use_case_as_one_line(tmp_path, sheet):
    sheet.write_text("")
    summary = signing_desk_import(tmp_path)
    assert not summary.errors, summary.errors
    assert endpoint(*RECIPIENTS).use_cases == "who still has to sign my contract"
    assert endpoint(*DOCUMENTS).use_cases == ""


def test_the_document_gives_several_use_cases_as_a_list_kept_one_per_line(tmp_path, sheet):
    sheet.write_text("")
    several = '["who still has to sign", "  is my contract   signed yet", "who still has to sign"]'
    signing_desk_import(
        tmp_path, SIGNING_DESK.replace('"  who still has to sign\\n   my contract  "', several)
    )
    assert endpoint(*RECIPIENTS).use_cases == "who still has to sign\nis my contract signed yet"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("42", "must be a non-empty string or a list of them"),
        ("[]", "must be a non-empty string or a list of them"),
        ('"  "', "must be a non-empty string"),
        ("[sign, 42]", "item 2 must be a non-empty string"),
        (f"[{', '.join(['sign'] * (USE_CASES_MAX + 1))}]", f"at most {USE_CASES_MAX}"),
        ("x" * (USE_CASE_CHARS + 1), f"longer than {USE_CASE_CHARS} characters"),
    ],
)
def test_a_bad_use_case_fails_the_document_naming_the_operation(tmp_path, sheet, value, message):
    sheet.write_text("")
    text = SIGNING_DESK.replace('"  who still has to sign\\n   my contract  "', value)
    summary = signing_desk_import(tmp_path, text)
    [(_, error)] = summary.errors
    assert "GET /envelopes/{envelopeId}/recipients" in error
    assert "x-gateway-use-case" in error and message in error
    assert not Endpoint.objects.exists()


def test_the_shipped_sheet_gives_the_use_cases_a_document_lacks(tmp_path, sheet):
    sheet.write_text(
        "signing-desk GET /envelopes/{envelopeId}/documents\tdownload the signed pdf"
        "\tget a copy of the contract everyone signed\n"
        "signing-desk GET /envelopes/{envelopeId}/recipients\tthe sheet's line\n"
    )
    signing_desk_import(tmp_path)
    assert endpoint(*DOCUMENTS).use_cases == (
        "download the signed pdf\nget a copy of the contract everyone signed"
    )
    assert endpoint(*RECIPIENTS).use_cases == "who still has to sign my contract"


def test_every_line_of_the_shipped_sheet_names_an_operation_and_clean_use_cases():
    keys = set()
    for number, line in enumerate(use_cases.SHEET.read_text(encoding="utf-8").splitlines(), 1):
        key, *written = line.split("\t")
        slug, method, path = key.split(" ", 2)
        assert written and method in Endpoint.Method.values and path.startswith("/"), number
        assert slug and use_cases.use_cases_clean(written) == tuple(written), number
        assert key not in keys, f"line {number} repeats {key}"
        keys.add(key)


def test_every_endpoint_of_the_seed_catalog_has_a_use_case():
    call_command("load_catalog", verbosity=0)
    endpoints = Endpoint.objects.filter(api__source__contains="catalog/providers")
    assert endpoints.count() > 200
    assert list(endpoints.filter(use_cases="").values_list("api__slug", "path")) == []


def test_the_use_case_is_embedded_as_a_view_of_its_own(
    tmp_path, sheet, django_capture_on_commit_callbacks
):
    sheet.write_text("")
    signing_desk_import(tmp_path)
    recipients, documents = endpoint(*RECIPIENTS), endpoint(*DOCUMENTS)
    stored = EndpointEmbedding.objects.get(endpoint=recipients)
    assert len(bytes(stored.use_case_vector)) == DIMENSIONS * 4
    without = EndpointEmbedding.objects.get(endpoint=documents)
    assert bytes(without.use_case_vector) == b""
    # An endpoint without a use case hashes as its vectors made before use cases did.
    texts = endpoint_search_texts_for(documents, documents.api)
    assert without.text_hash == hashlib.sha256(f"{texts.full}\n{texts.short}".encode()).hexdigest()

    before = search_index_build()
    documents.use_cases = "download the signed pdf of my contract"
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_save(endpoint=documents, changed_fields=["use_cases"])
    assert len(bytes(EndpointEmbedding.objects.get(endpoint=documents).use_case_vector)) > 0
    assert endpoint_embeddings_refresh() == 0
    rebuilt, scratch = search_index_build(previous=before), search_index_build()
    np.testing.assert_array_equal(rebuilt.vectors, scratch.vectors)
    row = [e.id for e in scratch.endpoints].index(documents.pk)
    assert not np.array_equal(scratch.vectors[row], before.vectors[row])


def test_several_use_cases_are_embedded_as_the_unit_mean_of_their_vectors(
    tmp_path, sheet, django_capture_on_commit_callbacks
):
    sheet.write_text("")
    signing_desk_import(tmp_path)
    documents = endpoint(*DOCUMENTS)
    wordings = ["download the signed pdf", "get a copy of the contract everyone signed"]
    documents.use_cases = "\n".join(wordings)
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_save(endpoint=documents, changed_fields=["use_cases"])

    stored = EndpointEmbedding.objects.get(endpoint=documents)
    vector = np.frombuffer(bytes(stored.use_case_vector), dtype="<f4")
    each = texts_embed(wordings)
    mean = each.mean(axis=0)
    np.testing.assert_allclose(vector, mean / np.linalg.norm(mean), atol=1e-6)
    assert abs(np.linalg.norm(vector) - 1) < 1e-5
    # Each wording's own vector is closer to the mean than to the other wording.
    assert min(each @ vector) > each[0] @ each[1]


def test_a_need_in_the_use_cases_words_finds_the_endpoint_its_record_words_hide(
    client_for, alice, tmp_path, sheet, django_capture_on_commit_callbacks
):
    sheet.write_text("")
    signing_desk_import(tmp_path)
    client = client_for(alice.live_key)

    def scores() -> dict[tuple[str, str], float]:
        response = client.post(
            "/v1/search", {"prompt": "who still has to sign my contract"}, format="json"
        )
        assert response.status_code == 200, response.content
        [api] = response.json()["results"]
        return {(e["method"], e["path"]): e["score"] for e in api["endpoints"]}

    with_use_case = scores()
    assert max(with_use_case, key=with_use_case.get) == RECIPIENTS
    recipients = endpoint(*RECIPIENTS)
    recipients.use_cases = ""
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_save(endpoint=recipients, changed_fields=["use_cases"])
    without_use_case = scores()
    assert max(without_use_case, key=without_use_case.get) == DOCUMENTS
    assert with_use_case[RECIPIENTS] > without_use_case[RECIPIENTS]
