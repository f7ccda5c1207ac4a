"""POST /v1/search on a small fixed catalog, with the real model (loaded once per test session)."""

import dataclasses
import gc
import weakref

import numpy as np
import pytest
from django.core.management import call_command

from catalog.apis import SearchOutputSerializer
from catalog.models import Endpoint, EndpointEmbedding, ProviderApi
from catalog.search import (
    RANKING,
    answer_rows,
    endpoint_short_text,
    lexical_tokens,
    prompt_words,
    query_normalise,
    search_index_build,
    search_index_current,
)
from catalog.services import (
    endpoint_embeddings_refresh,
    endpoint_save,
    endpoints_set_enabled,
    endpoints_set_verified,
    provider_api_save,
    provider_apis_set_enabled,
    provider_apis_set_verified,
)
from tests.catalog.conftest import assert_matches_documented_shape, import_documents
from tests.factories import make_endpoint, make_provider_api

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_search_index")]

ENDPOINTS = {
    # slug: (API description, [(method, path, summary, query parameters)])
    "mailcheck": (
        "Email verification and email finding for sales teams.",
        [
            ("GET", "/v1/verify", "Verify that an email address is deliverable", ["email"]),
            (
                "GET",
                "/v1/finder",
                "Find the professional email of a person from their name and company domain",
                ["first_name", "last_name", "domain"],
            ),
            ("GET", "/v1/account", "Remaining credits on the account", []),
        ],
    ),
    "shotter": (
        "Renders web pages in a real browser.",
        [
            ("GET", "/take", "Take a screenshot of a web page as PNG or PDF", ["url"]),
            ("GET", "/usage", "Screenshots used this month", []),
        ],
    ),
    "textly": (
        "Messaging for developers.",
        [
            ("POST", "/sms", "Send an SMS text message to a mobile phone number", ["to", "body"]),
            ("GET", "/sms/{id}", "Delivery status of a sent message", ["id"]),
        ],
    ),
    "skycast": (
        "Weather data for any place on earth.",
        [
            ("GET", "/forecast", "Weather forecast for the next 7 days for a city", ["city"]),
            ("GET", "/history", "Historical temperature and rainfall records", ["city", "date"]),
        ],
    ),
    "geoplace": (
        "Maps and places.",
        [("GET", "/geocode", "Turn a postal address into latitude and longitude", ["address"])],
    ),
}


@pytest.fixture
def catalog():
    for slug, (description, endpoints) in ENDPOINTS.items():
        api = make_provider_api(slug, description=description)
        for method, path, summary, names in endpoints:
            make_endpoint(
                api,
                path,
                method,
                summary=summary,
                query_params=[
                    {"name": name, "type": "string", "required": True, "description": ""}
                    for name in names
                ],
                is_payable=slug != "skycast",
            )
    endpoint_embeddings_refresh()


def search(client, body: dict, status: int = 200) -> dict:
    response = client.post("/v1/search", body, format="json")
    assert response.status_code == status, response.content
    return response.json()


def flat(body: dict) -> list[tuple[str, str]]:
    return [(api["slug"], ep["path"]) for api in body["results"] for ep in api["endpoints"]]


@pytest.mark.parametrize(
    ("prompt", "slug", "path"),
    [
        ("is this email deliverable", "mailcheck", "/v1/verify"),
        ("find the work email of a person at a company", "mailcheck", "/v1/finder"),
        ("screenshot a web page", "shotter", "/take"),
        ("text a customer on their mobile", "textly", "/sms"),
        ("will it rain in Paris this weekend", "skycast", "/forecast"),
        ("coordinates of a street address", "geoplace", "/geocode"),
    ],
)
def test_the_expected_endpoint_ranks_first(client_for, alice, catalog, prompt, slug, path):
    body = search(client_for(alice.live_key), {"prompt": prompt})
    assert flat(body)[0] == (slug, path)


def test_the_answer_has_the_contract_shape(client_for, alice, catalog):
    body = search(client_for(alice.live_key), {"prompt": "  verify an email  ", "limit": 3})
    assert_matches_documented_shape(SearchOutputSerializer, body)
    assert body["success"] is True
    assert body["searchType"] == "semantic"
    assert body["prompt"] == "  verify an email  "
    assert body["count"] == 3 == len(flat(body))
    assert body["apisCount"] == len(body["results"])
    assert isinstance(body["responseTime"], int | float) and body["responseTime"] >= 0
    top = body["results"][0]
    assert top["slug"] == "mailcheck" and top["baseUrl"] == "https://mailcheck.example"
    assert top["id"] and top["endpoints"][0]["id"]
    assert top["endpoints"][0]["price"] == "0.01"
    assert top["endpoints"][0]["method"] == "GET"


def test_the_default_limit_is_ten_endpoints_and_fifty_is_allowed(client_for, alice, catalog):
    client = client_for(alice.live_key)
    assert search(client, {"prompt": "email"})["count"] == 10
    assert search(client, {"prompt": "email", "limit": 50})["count"] == 10  # the whole catalog


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "prompt"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "   "}, "prompt"),
        ({"prompt": None}, "prompt"),
        ({"prompt": 42}, "prompt"),
        ({"prompt": ["send an sms"]}, "prompt"),
        ({"prompt": "x" * 1001}, "prompt"),
        ({"prompt": "sms", "limit": 0}, "limit"),
        ({"prompt": "sms", "limit": 51}, "limit"),
        ({"prompt": "sms", "limit": "5"}, "limit"),
        ({"prompt": "sms", "limit": 2.5}, "limit"),
        ({"prompt": "sms", "limit": True}, "limit"),
        ({"prompt": "sms", "limit": None}, "limit"),
    ],
)
def test_a_bad_request_is_a_400_naming_the_field(client_for, alice, body, field):
    answer = search(client_for(alice.live_key), body, status=400)
    assert answer["code"] == "INVALID_REQUEST"
    assert answer["error"].startswith(f"{field}:")


def test_results_are_grouped_by_api_in_score_order(client_for, alice, catalog):
    body = search(client_for(alice.live_key), {"prompt": "email address", "limit": 8})
    slugs = [api["slug"] for api in body["results"]]
    assert len(slugs) == len(set(slugs))  # one record per API
    best = [api["endpoints"][0]["score"] for api in body["results"]]
    assert best == sorted(best, reverse=True)
    for api in body["results"]:
        scores = [endpoint["score"] for endpoint in api["endpoints"]]
        assert scores == sorted(scores, reverse=True)
    mailcheck = body["results"][0]
    assert mailcheck["slug"] == "mailcheck" and len(mailcheck["endpoints"]) == 3


def scores_by_path(body: dict) -> dict[str, float]:
    return {ep["path"]: ep["score"] for api in body["results"] for ep in api["endpoints"]}


def test_scores_are_between_zero_and_one_and_separate_a_match_from_noise(
    client_for, alice, catalog
):
    client = client_for(alice.live_key)
    scores = scores_by_path(
        search(client, {"prompt": "send an sms message to a phone", "limit": 50})
    )
    assert all(0 <= score <= 1 for score in scores.values())
    assert scores["/sms"] > 0.5
    others = {path: score for path, score in scores.items() if not path.startswith("/sms")}
    assert max(others.values()) < 0.1


@pytest.mark.parametrize("prompt", ["xyzzy plugh", "fold the laundry", "purple monkey dishwasher"])
def test_a_need_nothing_answers_scores_low_everywhere(client_for, alice, catalog, prompt):
    body = search(client_for(alice.live_key), {"prompt": prompt, "limit": 50})
    assert max(scores_by_path(body).values()) < 0.3


def test_a_score_depends_on_the_endpoint_alone_not_on_the_other_candidates(
    client_for, alice, catalog
):
    """The same endpoint scores the same for the same need whether or not a better match
    stands beside it: disabling the best match leaves the others' scores as they were (but for
    BM25's word statistics, which lose one document). An answer leaves out a weaker endpoint of
    an API among its first five (see answer_rows), so which endpoints it shows may change: the
    endpoints both answers show are compared."""
    client = client_for(alice.live_key)
    prompt = {"prompt": "check that an email address exists and can receive mail", "limit": 50}
    before = scores_by_path(search(client, prompt))
    endpoints_set_enabled(
        endpoint_ids=list(Endpoint.objects.filter(path="/v1/verify").values_list("pk", flat=True)),
        enabled=False,
    )
    after = scores_by_path(search(client, prompt))
    assert "/v1/verify" in before and "/v1/verify" not in after
    shown_in_both = sorted(before.keys() & after.keys())
    assert len(shown_in_both) >= len(before) - 2
    assert [after[path] for path in shown_in_both] == pytest.approx(
        [before[path] for path in shown_in_both], abs=0.02
    )


def test_disabled_endpoints_and_apis_never_appear(client_for, alice, catalog):
    verify = Endpoint.objects.get(api__slug="mailcheck", path="/v1/verify")
    endpoints_set_enabled(endpoint_ids=[verify.pk], enabled=False)
    provider_apis_set_enabled(
        api_ids=Endpoint.objects.filter(api__slug="shotter").values_list("api_id", flat=True),
        enabled=False,
    )
    body = search(client_for(alice.live_key), {"prompt": "verify an email", "limit": 50})
    found = flat(body)
    assert ("mailcheck", "/v1/verify") not in found
    assert not [slug for slug, _ in found if slug == "shotter"]
    assert body["count"] == 10 - 1 - 2


def test_a_freshly_imported_endpoint_is_searchable_without_a_restart(
    client_for, alice, catalog, django_capture_on_commit_callbacks
):
    client = client_for(alice.live_key)
    before = search(client, {"prompt": "save a sales lead"})
    assert "hunter" not in [api["slug"] for api in before["results"]]
    index = search_index_current()
    with django_capture_on_commit_callbacks(execute=True):
        summary = import_documents("hunter-oas30.yaml")
    assert not summary.errors
    after = search(client, {"prompt": "save a sales lead"})
    assert after["results"][0]["slug"] == "hunter"
    assert search_index_current() is not index  # rebuilt in place, same process
    assert EndpointEmbedding.objects.filter(endpoint__api__slug="hunter").count() == (
        Endpoint.objects.filter(api__slug="hunter").count()
    )


def test_an_index_built_before_the_freeze_is_released_when_a_rebuild_replaces_it(
    client_for, alice, catalog
):
    # gateway.wsgi freezes what start-up loaded, the first index included: frozen objects are
    # never garbage-collected, so a superseded index must be freed by reference counting alone.
    client = client_for(alice.live_key)
    search(client, {"prompt": "send an sms"})
    first = weakref.ref(search_index_current())
    gc.freeze()
    try:
        usage = Endpoint.objects.get(api__slug="shotter", path="/usage")
        endpoints_set_enabled(endpoint_ids=[usage.pk], enabled=False)
        search(client, {"prompt": "send an sms"})
        assert search_index_current() is not first()
        assert first() is None
    finally:
        gc.unfreeze()


def test_payable_apis_carry_their_x402_address(client_for, alice, catalog, settings):
    body = search(client_for(alice.live_key), {"prompt": "weather forecast", "limit": 50})
    by_slug = {api["slug"]: api for api in body["results"]}
    assert "payableBaseUrl" not in by_slug["skycast"]  # none of its endpoints is payable
    assert by_slug["textly"]["payableBaseUrl"] == f"{settings.X402_URL}/textly"


def test_only_changed_endpoints_are_embedded_again(catalog, django_capture_on_commit_callbacks):
    assert endpoint_embeddings_refresh() == 0
    sms = Endpoint.objects.get(api__slug="textly", path="/sms")
    before = EndpointEmbedding.objects.get(endpoint=sms)
    sms.summary = "Send a WhatsApp message"
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_save(endpoint=sms, changed_fields=["summary"])
    after = EndpointEmbedding.objects.get(endpoint=sms)
    assert after.text_hash != before.text_hash and "WhatsApp" in after.text
    assert bytes(after.vector) != bytes(before.vector)
    assert endpoint_embeddings_refresh() == 0


def test_a_rebuild_after_edits_equals_a_build_from_scratch(
    catalog, django_capture_on_commit_callbacks
):
    EndpointEmbedding.objects.filter(endpoint__api__slug="geoplace").delete()  # no vector yet
    before = search_index_build()
    sms = Endpoint.objects.get(api__slug="textly", path="/sms")
    sms.summary = "Send a WhatsApp message"
    usage = Endpoint.objects.get(api__slug="shotter", path="/usage")
    with django_capture_on_commit_callbacks(execute=True):
        endpoint_save(endpoint=sms, changed_fields=["summary"])
        endpoints_set_enabled(endpoint_ids=[usage.pk], enabled=False)
    make_endpoint(ProviderApi.objects.get(slug="skycast"), "/pollen", summary="Pollen forecast")
    endpoint_embeddings_refresh()  # embeds the new endpoint and geoplace's again

    rebuilt = search_index_build(previous=before)
    scratch = search_index_build()

    key = [(endpoint.api.slug, endpoint.path) for endpoint in scratch.endpoints]
    assert [(endpoint.api.slug, endpoint.path) for endpoint in rebuilt.endpoints] == key
    assert ("shotter", "/usage") not in key and ("skycast", "/pollen") in key
    np.testing.assert_array_equal(rebuilt.vectors, scratch.vectors)
    assert rebuilt.text_hashes == scratch.text_hashes and "" not in rebuilt.text_hashes
    assert rebuilt.unembedded is None
    sms_row = key.index(("textly", "/sms"))
    assert not np.array_equal(rebuilt.vectors[sms_row], before.vectors[sms_row])
    assert rebuilt.lexical.get_scores(lexical_tokens("WhatsApp"))[sms_row] > 0


def test_renaming_an_api_embeds_its_endpoints_again(
    client_for, alice, catalog, django_capture_on_commit_callbacks
):
    api = ProviderApi.objects.get(slug="skycast")
    api.name = "Pollen Count"
    api.description = "Pollen and allergy forecasts."
    with django_capture_on_commit_callbacks(execute=True):
        provider_api_save(api=api, changed_fields=["name", "description"])
    texts = EndpointEmbedding.objects.filter(endpoint__api=api).values_list("text", flat=True)
    assert texts and all("Pollen and allergy forecasts" in text for text in texts)
    body = search(client_for(alice.live_key), {"prompt": "hay fever allergy outlook"})
    assert body["results"][0]["slug"] == "skycast"


def test_reindex_search_embeds_every_endpoint_again(catalog, capsys):
    EndpointEmbedding.objects.filter(endpoint__api__slug="skycast").delete()
    call_command("reindex_search", verbosity=0)
    assert "10 endpoints embedded" in capsys.readouterr().out
    assert EndpointEmbedding.objects.count() == 10


def test_an_endpoint_without_a_vector_is_still_found_by_its_words(client_for, alice, catalog):
    EndpointEmbedding.objects.filter(endpoint__api__slug="geoplace").delete()
    body = search(client_for(alice.live_key), {"prompt": "geocode a postal address", "limit": 2})
    assert ("geoplace", "/geocode") in flat(body)


def test_test_keys_search_the_same_catalog(client_for, alice, catalog):
    live = search(client_for(alice.live_key), {"prompt": "screenshot"})
    test = search(client_for(alice.test_key), {"prompt": "screenshot"})
    assert flat(live) == flat(test)


def test_a_request_without_a_key_is_refused(client_for, catalog):
    body = search(client_for(None), {"prompt": "screenshot"}, status=401)
    assert body["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(
    ("prompt", "need"),
    [
        ("I need an API that can verify an email address", "verify an email address"),
        ("Which endpoint lets me send an SMS?", "send an SMS"),
        ("How can I list my S3 buckets?", "list my S3 buckets"),
        ("Can you find me a tool to geocode addresses", "geocode addresses"),
        ("Is there an API for currency conversion?", "currency conversion"),
        ("is this email deliverable", "is this email deliverable"),
        ("api", "api"),
    ],
)
def test_framing_around_the_need_is_dropped_before_ranking(prompt, need):
    assert query_normalise(prompt) == need


@pytest.mark.parametrize(
    ("prompt", "need"),
    [
        ("is jane@acme.com a real address?", "is an email address a real address"),
        ("Can you find me an API to scrape https://example.com/pricing?", "scrape a web page"),
        ('search google for "best crm for startups"', "search google for a phrase"),
        ("search google for \u201cbest crm\u201d", "search google for a phrase"),
    ],
)
def test_a_concrete_value_is_read_by_its_kind_before_ranking(prompt, need):
    assert query_normalise(prompt) == need


def test_a_framed_question_finds_what_the_bare_need_finds(client_for, alice, catalog):
    client = client_for(alice.live_key)
    bare = search(client, {"prompt": "take a screenshot of a web page", "limit": 3})
    framed = search(
        client, {"prompt": "Can you find me an API to take a screenshot of a web page?", "limit": 3}
    )
    assert flat(framed) == flat(bare)
    assert framed["prompt"] == "Can you find me an API to take a screenshot of a web page?"


@pytest.mark.parametrize(
    ("operation_id", "summary", "description", "line"),
    [
        (
            "PutObject",
            "",
            "Adds an object to a bucket. " + "You must have WRITE access. " * 20,
            "Adds an object to a bucket. You must have WRITE access. You must have WRITE access. "
            "You must have WRITE access. You must have WRITE access.",
        ),
        ("addCards", "addCards()", "", "add cards"),
        ("getV3Users", "", "", "get users"),
        ("sendSms", "Send a text message", "Sends an SMS to one number.", "Send a text message"),
    ],
)
def test_the_short_text_says_in_one_line_what_the_endpoint_does(
    operation_id, summary, description, line
):
    text = endpoint_short_text(
        api_name="Store",
        method="post",
        path="/things/{id}",
        operation_id=operation_id,
        summary=summary,
        description=description,
    )
    assert text == f"Store. POST /things/{{id}}. {line}"


def test_results_describe_endpoints_in_plain_text_and_details_keep_the_original(
    client_for, alice, catalog
):
    written = (
        "<p>Sends the <b>weekly</b> weather digest by e-mail to every subscriber.</p> "
        + "<p>See [the guide](https://skycast.example/guide) for the schedule &amp; format.</p> "
        + "More words about delivery. " * 20
    )
    make_endpoint(
        ProviderApi.objects.get(slug="skycast"), "/digest", "POST", summary="", description=written
    )
    endpoint_embeddings_refresh()
    client = client_for(alice.live_key)

    body = search(client, {"prompt": "email the weekly weather digest", "limit": 1})
    shown = body["results"][0]["endpoints"][0]
    assert (body["results"][0]["slug"], shown["path"]) == ("skycast", "/digest")
    assert shown["description"].startswith(
        "Sends the weekly weather digest by e-mail to every subscriber. "
        "See the guide for the schedule & format. More words about delivery."
    )
    assert shown["description"].endswith(" …") and len(shown["description"]) <= 300

    details = client.post("/v1/details", {"api": "skycast", "path": "/digest"}, format="json")
    assert details.json()["endpoint"]["description"] == written


def test_an_answer_keeps_its_five_best_ahead_of_the_rest():
    a, b, c, d = 1, 2, 3, 4
    api_of = [a, a, b, a, a, a, c, a, d, a, c, b]
    # The five best hold the head; a's weaker endpoints would land inside it, b's after it.
    assert answer_rows(range(12), api_of, limit=10) == [0, 1, 2, 3, 4, 6, 8, 10, 11]
    assert answer_rows(range(12), api_of, limit=3) == [0, 1, 2]
    assert answer_rows(range(12), api_of, limit=10, head=10) == list(range(10))


def test_a_short_prompt_lifts_every_score_alike_and_less_the_longer_it_is():
    cosine = np.array([0.71, 0.52, 0.33, 0.1], dtype=np.float32)
    bm25 = np.array([3.0, 0.0, 1.5, 0.0], dtype=np.float32)
    unlifted = RANKING.logits(cosine, bm25)
    lifts = []
    for words in (1, 2, 3, 6, 12):
        logits = RANKING.logits(cosine, bm25, words=words)
        assert list(np.argsort(-logits)) == list(np.argsort(-unlifted))
        assert np.allclose(logits - unlifted, (logits - unlifted)[0])
        lifts.append(float((logits - unlifted)[0]))
    assert lifts == sorted(lifts, reverse=True)
    assert lifts[0] > 1 and lifts[-1] < 0.1 * lifts[0]


def test_a_prompt_is_as_long_as_its_need_without_the_words_around_it():
    assert prompt_words("weather") == 1
    assert prompt_words("I want to send an SMS") == 3
    assert prompt_words("  send   an sms ") == 3


FORECASTS = [
    ("/hourly", "Hourly weather forecast for the next 48 hours"),
    ("/daily", "Daily weather forecast for the next 16 days"),
    ("/minutely", "Minute by minute precipitation forecast for the next hour"),
    ("/climate", "Climate forecast for the next 30 days"),
    ("/marine", "Marine weather forecast with wave height"),
    ("/pollen", "Pollen forecast for the next 5 days"),
    ("/uv", "UV index forecast for the next days"),
]


def test_grouping_never_pushes_one_of_the_five_best_below_fifth_place(client_for, alice, catalog):
    sunny = make_provider_api("sunny", description="Weather forecasts.")
    for path, summary in FORECASTS:
        make_endpoint(sunny, path, summary=summary)
    endpoint_embeddings_refresh()
    prompt = "weather forecast for the coming days"
    index = search_index_current()
    logits = RANKING.logits(*index.signals(prompt), index.verified, index.has_use_case)
    best = [index.endpoints[row] for row in np.argsort(-logits)[:10]]
    second = next(endpoint for endpoint in best if endpoint.api.slug != best[0].api.slug)
    # Ten best as they come would hold five or more of the leading API's, grouped ahead of the
    # second API's best although it is one of the five best.
    assert second in best[:5]
    assert sum(endpoint.api.slug == best[0].api.slug for endpoint in best) >= 5

    client = client_for(alice.live_key)
    answer = flat(search(client, {"prompt": prompt, "limit": 10}))
    assert (second.api.slug, second.path) in answer[:5]
    assert answer[:5] == flat(search(client, {"prompt": prompt, "limit": 5}))
    assert len(answer) == 10


def test_at_about_equal_relevance_the_verified_endpoint_comes_first(client_for, alice, catalog):
    # Two APIs alike but for their names, which move their relevance by less than the prior.
    for slug in ("postcheck", "mailcheck-pro"):
        relay = make_provider_api(slug, description="Email tools.")
        make_endpoint(relay, "/check", summary="Check whether an email address is deliverable")
    endpoint_embeddings_refresh()
    client = client_for(alice.live_key)
    prompt = "check whether an email address is deliverable"
    before = [slug for slug, path in flat(search(client, {"prompt": prompt})) if path == "/check"]
    runner_up = before[1]

    api = ProviderApi.objects.get(slug=runner_up)
    provider_apis_set_verified(api_ids=[api.pk], verified=True)
    endpoints_set_verified(endpoint_ids=[api.endpoints.get().pk], verified=True)

    body = search(client, {"prompt": prompt})
    after = [slug for slug, path in flat(body) if path == "/check"]
    assert after == [runner_up, before[0]]
    assert body["results"][0]["verified"] is True
    assert body["results"][0]["endpoints"][0]["verified"] is True


def test_verification_never_lifts_an_endpoint_over_a_clear_match(client_for, alice, catalog):
    forecast_api = ProviderApi.objects.get(slug="skycast")
    provider_apis_set_verified(api_ids=[forecast_api.pk], verified=True)
    endpoints_set_verified(
        endpoint_ids=list(forecast_api.endpoints.values_list("pk", flat=True)), verified=True
    )
    body = search(client_for(alice.live_key), {"prompt": "send an sms to a phone"})
    assert flat(body)[0] == ("textly", "/sms")


def test_the_lexical_best_match_takes_fifth_place_when_it_ranks_below():
    ranking = dataclasses.replace(RANKING, verified_prior=0.0)
    cosine = np.linspace(0.9, 0.1, 12, dtype=np.float32)
    bm25 = np.zeros(12, dtype=np.float32)
    bm25[9] = 7.0  # the words' best match, tenth by relevance
    bm25[2] = 3.0
    unlifted = dataclasses.replace(ranking, lexical_best_place=0).relevance(cosine, bm25)

    lifted = ranking.relevance(cosine, bm25)
    order = np.argsort(-lifted, kind="stable").tolist()
    assert order[:6] == [0, 1, 2, 3, 9, 4]
    assert unlifted[4] < lifted[9] <= unlifted[3]
    others = np.arange(12) != 9
    assert np.array_equal(lifted[others], unlifted[others])


def test_a_lexical_best_match_already_among_the_first_five_keeps_its_place():
    ranking = dataclasses.replace(RANKING, verified_prior=0.0)
    cosine = np.linspace(0.9, 0.1, 12, dtype=np.float32)
    unlifted = dataclasses.replace(ranking, lexical_best_place=0)
    for bm25 in (np.eye(12, dtype=np.float32)[3] * 5, np.zeros(12, dtype=np.float32)):
        assert np.array_equal(ranking.relevance(cosine, bm25), unlifted.relevance(cosine, bm25))


def test_the_best_match_of_the_query_words_is_among_the_first_five(client_for, alice, catalog):
    sunny = make_provider_api("sunny", description="Weather forecasts.")
    for path, summary in FORECASTS:
        make_endpoint(sunny, path, summary=summary)
    aviation = make_provider_api("avwx", description="Flight planning tools for pilots.")
    make_endpoint(
        aviation,
        "/metar/{station}",
        summary="METAR",
        description="Decoded METAR for an ICAO station.",
    )
    endpoint_embeddings_refresh()
    prompt = "current weather at an airport by icao code"
    index = search_index_current()
    cosine, bm25 = index.signals(prompt)
    words_best = int(np.argmax(bm25))
    assert index.endpoints[words_best].api.slug == "avwx"
    # The model alone prefers seven forecasts to the one report the words name.
    unlifted = dataclasses.replace(RANKING, lexical_best_place=0)
    unlifted_order = np.argsort(
        -unlifted.logits(cosine, bm25, index.verified, index.has_use_case)
    ).tolist()
    assert unlifted_order.index(words_best) >= 5

    body = search(client_for(alice.live_key), {"prompt": prompt, "limit": 10})
    answer = flat(body)
    assert ("avwx", "/metar/{station}") in answer[:5]
    scores = [endpoint["score"] for api in body["results"] for endpoint in api["endpoints"]]
    assert scores[answer.index(("avwx", "/metar/{station}"))] >= sorted(scores)[-5]
