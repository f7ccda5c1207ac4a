import json
import shutil

import pytest
import responses
from django.core.management import CommandError, call_command

from catalog.models import Endpoint, ProviderApi
from catalog.services import openapi_import
from tests.catalog.conftest import CORPUS, DOCUMENTS, ONE_CENT, import_documents

pytestmark = pytest.mark.django_db


def endpoint(slug: str, method: str, path: str) -> Endpoint:
    return Endpoint.objects.select_related("api").get(api__slug=slug, method=method, path=path)


def params_by_name(params: list[dict]) -> dict[str, dict]:
    return {param["name"]: param for param in params}


# --- Swagger 2.0 ----------------------------------------------------------------------------------


def test_a_swagger_document_becomes_an_api_with_its_base_url_from_host_base_path_and_schemes():
    import_documents("petstore-swagger2.json")
    api = ProviderApi.objects.get(slug="pet-store")
    assert api.name == "Pet Store"
    assert api.description == "Pets for sale"
    assert api.base_url == "https://pets.example.com:8443/v2"
    assert api.docs_url == "https://pets.example.com/docs"
    assert (api.upstream_auth_type, api.upstream_auth_name) == ("header", "X-Pet-Key")
    methods_and_paths = set(api.endpoints.values_list("method", "path"))
    assert methods_and_paths == {
        ("GET", "/pets"),
        ("POST", "/pets"),
        ("GET", "/pets/{petId}"),
        ("DELETE", "/pets/{petId}"),
        ("POST", "/pets/{petId}/photo"),
        ("GET", "/search?mode=fuzzy"),
        ("GET", "/pets/{petId}/broken"),
    }


def test_swagger_query_parameters_resolve_refs_and_keep_their_bounds():
    import_documents("petstore-swagger2.json")
    query = params_by_name(endpoint("pet-store", "GET", "/pets").query_params)
    assert query["limit"] == {
        "name": "limit",
        "type": "integer",
        "required": False,
        "description": "",
        "maximum": 100,
        "default": 20,
    }
    assert query["tags"]["type"] == "array"
    assert query["tags"]["items"] == "string"
    assert query["tags"]["maxItems"] == 5


def test_a_swagger_body_parameter_gives_the_schema_properties_with_all_of_merged():
    import_documents("petstore-swagger2.json")
    add = endpoint("pet-store", "POST", "/pets")
    assert add.body_type == "object"
    assert add.body_content_type == "application/json"
    body = params_by_name(add.body_params)
    assert set(body) == {"name", "tag", "owner"}
    assert body["name"]["required"] is True
    assert body["name"]["description"] == "Pet name"
    assert body["tag"]["enum"] == ["dog", "cat"]
    assert body["owner"]["type"] == "object"  # a recursive schema does not loop


def test_path_level_parameters_merge_with_operation_level_ones_which_win():
    import_documents("petstore-swagger2.json")
    one = endpoint("pet-store", "GET", "/pets/{petId}")
    assert one.path_params == [
        {"name": "petId", "type": "integer", "required": True, "description": "The pet"}
    ]
    assert one.docs_url == "https://pets.example.com/docs/get"
    removal = endpoint("pet-store", "DELETE", "/pets/{petId}")
    assert removal.path_params[0]["type"] == "string"
    assert removal.path_params[0]["description"] == "Overridden at operation level"


def test_form_data_parameters_become_a_multipart_body_when_a_file_is_sent():
    import_documents("petstore-swagger2.json")
    upload = endpoint("pet-store", "POST", "/pets/{petId}/photo")
    assert upload.body_type == "object"
    assert upload.body_content_type == "multipart/form-data"
    assert [(p["name"], p["type"], p["required"]) for p in upload.body_params] == [
        ("file", "file", True),
        ("caption", "string", False),
    ]
    assert upload.path_params[0]["name"] == "petId"


def test_a_query_string_inside_a_path_is_kept_as_part_of_the_catalog_path():
    import_documents("petstore-swagger2.json")
    fuzzy = endpoint("pet-store", "GET", "/search?mode=fuzzy")
    assert fuzzy.query_params[0]["name"] == "q"


def test_a_dangling_ref_is_a_warning_and_the_placeholder_still_becomes_a_path_param():
    summary = import_documents("petstore-swagger2.json")
    assert any("#/parameters/nowhere" in w for w in summary.documents[0].warnings)
    broken = endpoint("pet-store", "GET", "/pets/{petId}/broken")
    assert broken.path_params == [
        {"name": "petId", "type": "string", "required": True, "description": ""}
    ]


def test_operations_without_a_price_take_the_default_price():
    import_documents("petstore-swagger2.json", default_price_micros=25_000)
    listing = endpoint("pet-store", "GET", "/pets")
    assert (listing.price_kind, listing.price_micros) == ("fixed", 25_000)


# --- OpenAPI 3.0 and the x-gateway extensions ----------------------------------------------------


def test_the_api_extension_sets_slug_name_category_owner_docs_sandbox_auth_and_timeout(
    hunter, settings
):
    api = ProviderApi.objects.select_related("owner").get(slug="hunter")
    assert api.name == "Hunter"
    assert api.category == "people-email"
    assert api.owner.slug == "hunter-inc"
    assert api.docs_url == "https://hunter.example/api-documentation"
    assert api.verified is True
    assert api.sandbox_base_url == f"{settings.SANDBOX_BASE_URL}/hunter"
    assert (api.upstream_auth_type, api.upstream_auth_name) == ("query", "api_key")
    assert api.timeout_seconds == 20


def test_server_variables_take_their_defaults(hunter):
    assert ProviderApi.objects.get(slug="hunter").base_url == "https://api.hunter.example/v2"


def test_every_price_kind_is_read_from_x_gateway_price(hunter):
    search = endpoint("hunter", "GET", "/domain-search")
    assert search.price_kind == "per_result"
    assert search.price_micros == 2_500
    assert search.result_count_path == "data.emails"
    assert search.result_bound_param == "limit"
    assert search.result_max == 100
    assert search.pagination_params == ["offset"]
    verifier = endpoint("hunter", "GET", "/email-verifier")
    assert (verifier.price_kind, verifier.price_micros) == ("fixed", 10_000)
    assert endpoint("hunter", "POST", "/leads").price_kind == "free"
    assert endpoint("hunter", "GET", "/leads/{id}").price_kind == "free"


def test_a_request_body_ref_gives_body_params_with_their_required_flags(hunter):
    leads = endpoint("hunter", "POST", "/leads")
    body = params_by_name(leads.body_params)
    assert body["email"]["required"] is True
    assert body["email"]["format"] == "email"
    assert body["first_name"]["required"] is False
    assert body["tags"]["maxItems"] == 20


def test_a_form_encoded_request_body_is_recorded_with_its_content_type(hunter):
    update = endpoint("hunter", "PUT", "/leads/{id}")
    assert update.body_content_type == "application/x-www-form-urlencoded"
    assert update.body_params[0]["name"] == "company"


def test_the_poll_extension_links_the_free_poll_endpoint(hunter):
    start = endpoint("hunter", "POST", "/bulk-enrichments")
    poll = endpoint("hunter", "GET", "/bulk-enrichments/{enrichment_id}")
    assert start.poll_endpoint_id == poll.pk
    assert poll.price_kind == "free"
    assert start.price_micros == 50_000


def test_verified_follows_the_api_unless_the_operation_says_otherwise(hunter):
    assert endpoint("hunter", "GET", "/email-verifier").verified is True
    assert endpoint("hunter", "POST", "/leads").verified is False


def test_enabled_and_payable_extensions_are_read(hunter):
    reindex = endpoint("hunter", "POST", "/internal/reindex")
    assert reindex.enabled is False
    assert reindex.is_payable is False
    assert endpoint("hunter", "GET", "/email-verifier").is_payable is True


def test_an_invalid_price_fails_the_document_naming_the_operation(tmp_path):
    document = tmp_path / "bad-price.yaml"
    document.write_text(
        "openapi: 3.0.0\ninfo: {title: Bad}\npaths:\n  /x:\n    get:\n"
        "      x-gateway-price: {kind: per_result, usdPerResult: '0.01'}\n"
    )
    summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
    assert summary.documents == []
    [(location, message)] = summary.errors
    assert location == str(document)
    assert "GET /x" in message and "resultsPath" in message
    assert not ProviderApi.objects.filter(slug="bad").exists()


# --- OpenAPI 3.1 ----------------------------------------------------------------------------------


def test_an_openapi_3_1_document_reads_type_lists_examples_and_ref_siblings():
    import_documents("llm-oas31.yaml")
    api = ProviderApi.objects.get(slug="chat-models-inc")
    assert api.category == "llm"
    chat = endpoint("chat-models-inc", "POST", "/chat/completions")
    assert chat.price_kind == "dynamic"
    assert (chat.input_micros_per_mtok, chat.output_micros_per_mtok) == (600_000, 2_200_000)
    assert chat.default_max_tokens == 1024
    assert chat.description == "Generate a reply for a conversation."
    body = params_by_name(chat.body_params)
    assert body["temperature"]["type"] == "number"
    assert body["messages"]["type"] == "array"
    assert body["messages"]["description"] == "The conversation so far"
    assert body["model"]["required"] is True
    models = endpoint("chat-models-inc", "GET", "/models")
    assert models.query_params[0]["type"] == "string"
    assert models.query_params[0]["example"] == "glm"


def test_exclusive_bounds_read_the_same_in_every_version(tmp_path):
    """OpenAPI 3.1 writes the excluded bound itself; 2 and 3.0 flag minimum or maximum."""
    parameters = {
        "3.1.0": "{exclusiveMinimum: 0, exclusiveMaximum: 1}",
        "3.0.3": "{minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true}",
    }
    for version, schema in parameters.items():
        document = tmp_path / f"ratio-{version}.yaml"
        document.write_text(
            f"openapi: {version}\ninfo: {{title: Ratio {version[:3]}}}\npaths:\n  /r:\n"
            f"    get:\n      parameters:\n        - {{name: share, in: query, schema: {schema}}}\n"
        )
        summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
        assert not summary.errors, summary.errors
        slug = ProviderApi.objects.get(name=f"Ratio {version[:3]}").slug
        [share] = endpoint(slug, "GET", "/r").query_params
        assert (share["minimum"], share["exclusiveMinimum"]) == (0, True), version
        assert (share["maximum"], share["exclusiveMaximum"]) == (1, True), version


def test_a_reserved_expansion_path_parameter_is_marked_multi_segment(tmp_path):
    document = tmp_path / "tasks.json"
    name = {"name": "name", "in": "path", "required": True, "type": "string"}
    document.write_text(
        json.dumps(
            {
                "swagger": "2.0",
                "info": {"title": "Tasks", "version": "v2"},
                "host": "tasks.example",
                "paths": {
                    "/v2/{name}": {"get": {"parameters": [{**name, "x-reservedExpansion": True}]}},
                    "/v2/queues/{name}": {"get": {"parameters": [name]}},
                },
            }
        )
    )
    summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
    assert not summary.errors, summary.errors
    [resource] = endpoint("tasks", "GET", "/v2/{name}").path_params
    [queue] = endpoint("tasks", "GET", "/v2/queues/{name}").path_params
    assert resource["multiSegment"] is True
    assert "multiSegment" not in queue


def test_an_object_example_is_kept_and_an_object_bound_is_not(tmp_path):
    document = tmp_path / "people.yaml"
    document.write_text(
        "openapi: 3.0.3\ninfo: {title: People}\npaths:\n  /enrich:\n    post:\n"
        "      requestBody:\n        content:\n          application/json:\n            schema:\n"
        "              type: object\n              required: [data]\n              properties:\n"
        "                data: {type: object, example: {full_name: Jane Doe}, default: {x: 1}}\n"
    )
    summary = openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)
    assert not summary.errors, summary.errors
    [data] = endpoint("people", "POST", "/enrich").body_params
    assert data["example"] == {"full_name": "Jane Doe"}
    assert "default" not in data


def test_a_relative_server_without_a_source_url_leaves_the_base_url_empty_with_a_warning():
    summary = import_documents("llm-oas31.yaml")
    assert ProviderApi.objects.get(slug="chat-models-inc").base_url == ""
    assert any("no base URL" in warning for warning in summary.documents[0].warnings)


# --- Re-import -----------------------------------------------------------------------------------


def test_importing_the_same_document_again_changes_nothing(hunter):
    ids = set(Endpoint.objects.values_list("pk", flat=True))
    again = import_documents("hunter-oas30.yaml")
    assert set(Endpoint.objects.values_list("pk", flat=True)) == ids
    report = again.documents[0]
    assert (report.api_created, report.api_updated) == (False, False)
    assert report.endpoints_created == report.endpoints_updated == 0
    assert report.endpoints_unchanged == len(ids)


def test_re_import_keeps_the_operators_price_verified_and_enabled_choices(hunter):
    verifier = endpoint("hunter", "GET", "/email-verifier")
    verifier.price_micros = 30_000
    verifier.verified = False
    verifier.enabled = False
    verifier.price_set_by_operator = verifier.verified_by_operator = True
    verifier.enabled_by_operator = True
    verifier.save()
    api = ProviderApi.objects.get(slug="hunter")
    api.verified, api.verified_by_operator = False, True
    api.save()

    import_documents("hunter-oas30.yaml")
    verifier.refresh_from_db()
    api.refresh_from_db()
    assert verifier.price_micros == 30_000
    assert verifier.verified is False
    assert verifier.enabled is False
    assert api.verified is False


def test_re_import_updates_what_the_document_changed(tmp_path, hunter):
    text = (DOCUMENTS / "hunter-oas30.yaml").read_text()
    changed = tmp_path / "hunter-oas30.yaml"
    changed.write_text(
        text.replace("summary: Verify an email address", "summary: Check an address").replace(
            'x-gateway-price: "0.01"', 'x-gateway-price: "0.02"'
        )
    )
    summary = openapi_import(locations=[str(changed)], default_price_micros=ONE_CENT)
    assert summary.documents[0].endpoints_updated == 1
    verifier = endpoint("hunter", "GET", "/email-verifier")
    assert verifier.summary == "Check an address"
    assert verifier.price_micros == 20_000


def test_operations_removed_from_the_document_are_disabled_not_deleted(tmp_path, hunter):
    text = (DOCUMENTS / "hunter-oas30.yaml").read_text()
    shorter = tmp_path / "hunter.yaml"
    start = text.index("  /email-verifier:")
    end = text.index("  /leads:")
    shorter.write_text(text[:start] + text[end:])
    summary = openapi_import(locations=[str(shorter)], default_price_micros=ONE_CENT)
    assert summary.documents[0].endpoints_disabled == 1
    verifier = endpoint("hunter", "GET", "/email-verifier")
    assert verifier.enabled is False

    import_documents("hunter-oas30.yaml")  # back in the document: enabled again
    verifier.refresh_from_db()
    assert verifier.enabled is True


def test_verify_marks_every_imported_api_and_endpoint_verified():
    import_documents("petstore-swagger2.json", verify=True)
    api = ProviderApi.objects.get(slug="pet-store")
    assert api.verified is True
    assert set(api.endpoints.values_list("verified", flat=True)) == {True}


# --- Files, directories, URLs and the command -----------------------------------------------------


def test_one_broken_file_in_a_directory_does_not_stop_the_others(tmp_path):
    for name in ("broken.yaml", "hunter-oas30.yaml", "petstore-swagger2.json"):
        shutil.copy(DOCUMENTS / name, tmp_path / name)
    (tmp_path / "notes.txt").write_text("not a document")
    summary = openapi_import(locations=[str(tmp_path)], default_price_micros=ONE_CENT)
    assert sorted(report.slug for report in summary.documents) == ["hunter", "petstore-swagger2"]
    [(location, message)] = summary.errors
    assert location.endswith("broken.yaml")
    assert "invalid YAML" in message


def test_a_document_that_is_not_openapi_is_refused_with_a_clear_error(tmp_path):
    other = tmp_path / "package.json"
    other.write_text(json.dumps({"name": "left-pad"}))
    summary = openapi_import(locations=[str(other)], default_price_micros=ONE_CENT)
    assert summary.errors == [
        (str(other), "not an OpenAPI document: it has neither 'swagger' nor 'openapi'")
    ]


def test_directory_slugs_come_from_the_provider_and_service_folders(tmp_path):
    (tmp_path / "pets.example.com" / "store").mkdir(parents=True)
    shutil.copy(
        DOCUMENTS / "petstore-swagger2.json", tmp_path / "pets.example.com" / "store" / "1.0.json"
    )
    (tmp_path / "llm.example").mkdir()
    shutil.copy(DOCUMENTS / "llm-oas31.yaml", tmp_path / "llm.example" / "v4.yaml")
    summary = openapi_import(locations=[str(tmp_path)], default_price_micros=ONE_CENT)
    assert sorted(report.slug for report in summary.documents) == [
        "llm-example",
        "pets-example-com-store",
    ]
    again = openapi_import(locations=[str(tmp_path)], default_price_micros=ONE_CENT)
    assert sorted(report.slug for report in again.documents) == [
        "llm-example",
        "pets-example-com-store",
    ]
    assert ProviderApi.objects.count() == 2


def _petstore_copy(folder, name: str = "1.0.json", summary: str = "") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    text = (DOCUMENTS / "petstore-swagger2.json").read_text()
    if summary:
        text = text.replace('"summary": "List pets"', f'"summary": "{summary}"')
    (folder / name).write_text(text)
    return str(folder / name)


def test_a_document_whose_title_slugifies_like_another_documents_api_is_refused(tmp_path):
    first = _petstore_copy(tmp_path / "a", "petstore.json")
    openapi_import(locations=[first], default_price_micros=ONE_CENT)
    other = _petstore_copy(tmp_path / "b", "pets.json", summary="Every pet of another shop")

    summary = openapi_import(locations=[other], default_price_micros=ONE_CENT)

    [(location, message)] = summary.errors
    assert location == other
    assert message == (
        f"the slug pet-store belongs to the API imported from {first}: give this document a "
        "slug of its own, or import it with replace to update that API"
    )
    assert endpoint("pet-store", "GET", "/pets").summary == "List pets"
    assert ProviderApi.objects.get().source == first


def test_replace_lets_a_derived_slug_update_another_documents_api(tmp_path):
    first = _petstore_copy(tmp_path / "a", "petstore.json")
    openapi_import(locations=[first], default_price_micros=ONE_CENT)
    other = _petstore_copy(tmp_path / "b", "pets.json", summary="Every pet of another shop")

    summary = openapi_import(locations=[other], default_price_micros=ONE_CENT, replace=True)

    assert not summary.errors
    assert f"replaces the API pet-store imported from {first}" in summary.documents[0].warnings
    assert endpoint("pet-store", "GET", "/pets").summary == "Every pet of another shop"
    assert ProviderApi.objects.get().source == other


def test_a_tree_import_does_not_overwrite_an_api_whose_slug_a_folder_repeats(tmp_path, hunter):
    """A folder named like a curated API (googleapis.com/youtube beside the seed's youtube) would
    have replaced it and disabled its endpoints."""
    _petstore_copy(tmp_path / "googleapis.com" / "hunter")
    _petstore_copy(tmp_path / "googleapis.com" / "drive")
    enabled = set(Endpoint.objects.filter(api__slug="hunter", enabled=True).values_list("id"))

    summary = openapi_import(
        locations=[str(tmp_path / "googleapis.com")], default_price_micros=ONE_CENT
    )

    assert [report.slug for report in summary.documents] == ["drive"]
    [(location, message)] = summary.errors
    assert location.endswith("hunter/1.0.json")
    assert message.startswith("the slug hunter belongs to the API imported from ")
    assert ProviderApi.objects.get(slug="hunter").name == "Hunter"
    assert set(Endpoint.objects.filter(api__slug="hunter", enabled=True).values_list("id")) == (
        enabled
    )


def test_a_tree_moved_to_another_place_updates_the_apis_it_created(tmp_path):
    _petstore_copy(tmp_path / "old" / "specs" / "pets.example.com" / "store")
    openapi_import(locations=[str(tmp_path / "old" / "specs")], default_price_micros=ONE_CENT)
    moved = tmp_path / "new" / "specs" / "pets.example.com" / "store"
    _petstore_copy(moved, summary="Every pet")

    summary = openapi_import(
        locations=[str(tmp_path / "new" / "specs")], default_price_micros=ONE_CENT
    )

    assert not summary.errors
    api = ProviderApi.objects.get()
    assert (api.slug, api.source) == ("pets-example-com-store", str(moved / "1.0.json"))
    assert endpoint("pets-example-com-store", "GET", "/pets").summary == "Every pet"


def test_a_slug_the_document_or_the_operator_names_updates_the_api_whatever_its_source(
    tmp_path, hunter
):
    other = _petstore_copy(tmp_path / "elsewhere", "pets.json")
    summary = openapi_import(locations=[other], slug="hunter", default_price_micros=ONE_CENT)
    assert not summary.errors
    assert summary.documents[0].warnings[-1].startswith("replaces the API hunter imported from ")
    assert ProviderApi.objects.get(slug="hunter").source == other


@responses.activate
def test_a_document_is_imported_from_a_url_and_relative_servers_resolve_against_it():
    responses.get(
        "https://models.example/openapi.yaml",
        body=(DOCUMENTS / "llm-oas31.yaml").read_bytes(),
        content_type="application/yaml",
    )
    summary = openapi_import(
        locations=["https://models.example/openapi.yaml"], default_price_micros=ONE_CENT
    )
    assert not summary.errors
    api = ProviderApi.objects.get(slug="chat-models-inc")
    assert api.base_url == "https://models.example/api/paas/v4"
    assert api.source == "https://models.example/openapi.yaml"


@responses.activate
def test_a_url_that_fails_is_reported_with_its_status():
    responses.get("https://down.example/openapi.json", status=503)
    summary = openapi_import(
        locations=["https://down.example/openapi.json"], default_price_micros=ONE_CENT
    )
    assert summary.errors == [
        ("https://down.example/openapi.json", "fetching it answered HTTP 503")
    ]


def test_the_command_prints_a_summary_line(capsys):
    call_command("import_openapi", str(DOCUMENTS / "hunter-oas30.yaml"), "--price-usd", "0.03")
    output = capsys.readouterr().out
    assert "1 documents imported, 0 failed" in output
    assert "APIs: 1 created" in output
    assert "endpoints: 8 created" in output
    assert endpoint("hunter", "GET", "/leads/{id}").price_kind == "free"
    assert endpoint("hunter", "PUT", "/leads/{id}").price_micros == 30_000


def test_the_command_names_the_broken_file_and_fails_when_nothing_imports(capsys):
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_openapi", str(DOCUMENTS / "broken.yaml"))
    assert "broken.yaml: invalid YAML" in capsys.readouterr().err


def test_the_command_takes_a_slug_for_a_single_document():
    call_command("import_openapi", str(DOCUMENTS / "petstore-swagger2.json"), "--slug", "pets")
    assert ProviderApi.objects.filter(slug="pets").exists()
    with pytest.raises(CommandError, match="single document"):
        call_command("import_openapi", str(DOCUMENTS), "--slug", "pets")


def test_the_command_replaces_another_documents_api_only_when_asked(tmp_path, capsys):
    first = _petstore_copy(tmp_path / "a", "petstore.json")
    call_command("import_openapi", first)
    other = _petstore_copy(tmp_path / "b", "pets.json", summary="Every pet of another shop")
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_openapi", other)
    assert "import it with replace to update that API" in capsys.readouterr().err

    call_command("import_openapi", other, "--replace")
    assert endpoint("pet-store", "GET", "/pets").summary == "Every pet of another shop"


def test_the_command_refuses_a_price_that_is_not_a_dollar_amount():
    with pytest.raises(CommandError, match="--price-usd"):
        call_command("import_openapi", str(DOCUMENTS / "hunter-oas30.yaml"), "--price-usd", "a lot")


# --- Real documents of the corpus -----------------------------------------------------------------

MESSY_CORPUS_FILES = [
    "amazonaws.com/acm/2015-12-08.json",  # "/#X-Amz-Target" fragments as paths, path-level params
    "amazonaws.com/cloudfront/2017-03-25.json",  # query strings inside paths
    "lufthansa.com/public/1.0.json",  # provider/service/version layout
    "azure.com/arm-logic/2016-06-01.json",  # deep $refs into definitions
]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the checkout")
def test_messy_corpus_documents_import_and_reimport_idempotently(tmp_path):
    for name in MESSY_CORPUS_FILES:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CORPUS / name, target)
    summary = openapi_import(locations=[str(tmp_path)], default_price_micros=ONE_CENT)
    assert summary.errors == []
    assert {report.slug for report in summary.documents} == {
        "amazonaws-com-acm",
        "amazonaws-com-cloudfront",
        "lufthansa-com-public",
        "azure-com-arm-logic",
    }
    operations = 0
    for name in MESSY_CORPUS_FILES:
        paths = json.loads((CORPUS / name).read_text())["paths"]
        operations += sum(1 for item in paths.values() for method in item if method != "parameters")
    assert Endpoint.objects.count() == operations
    assert Endpoint.objects.filter(path__contains="?").exists()
    assert Endpoint.objects.filter(path__startswith="/#").exists()
    count = Endpoint.objects.count()
    again = openapi_import(locations=[str(tmp_path)], default_price_micros=ONE_CENT)
    assert again.total("endpoints_created") == again.total("endpoints_updated") == 0
    assert Endpoint.objects.count() == count


def write(tmp_path, text: str):
    document = tmp_path / "document.yaml"
    document.write_text(text)
    return openapi_import(locations=[str(document)], default_price_micros=ONE_CENT)


def test_a_document_without_title_or_slug_is_refused_saying_how_to_name_it(tmp_path):
    summary = write(tmp_path, "swagger: '2.0'\ninfo: {}\nhost: x.example\npaths: {}\n")
    assert "no slug" in summary.errors[0][1]
    assert "x-gateway-api.slug" in summary.errors[0][1]


def test_an_extension_slug_that_is_not_a_slug_is_refused(tmp_path):
    summary = write(
        tmp_path, "openapi: 3.0.0\ninfo: {title: T}\nx-gateway-api: {slug: Not A Slug}\npaths: {}\n"
    )
    assert "is not a slug" in summary.errors[0][1]
    assert ProviderApi.objects.count() == 0


def test_a_poll_extension_naming_an_undeclared_operation_is_a_warning(tmp_path):
    summary = write(
        tmp_path,
        "openapi: 3.0.0\ninfo: {title: Jobs}\nservers: [{url: 'https://jobs.example'}]\n"
        "paths:\n  /jobs:\n    post:\n      x-gateway-poll: {path: '/jobs/{id}'}\n",
    )
    assert summary.errors == []
    assert any("GET /jobs/{id}" in warning for warning in summary.documents[0].warnings)
    assert endpoint("jobs", "POST", "/jobs").poll_endpoint_id is None


def test_an_unsupported_openapi_version_is_refused(tmp_path):
    summary = write(tmp_path, "openapi: 4.0.0\ninfo: {title: Future}\npaths: {}\n")
    assert "unsupported OpenAPI version '4.0.0'" in summary.errors[0][1]
