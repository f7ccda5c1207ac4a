"""Searches are finite numbered result sets: pages differ, their union is stable, cursors
decode deterministically and chains of them end."""

import pytest

from sandbox.paging import cursor_token


def _emails(sandbox, **query):
    response = sandbox.call(
        "hunter", "GET", "/v2/domain-search", query={"domain": "acme.io", **query}
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_page_two_differs_from_page_one(sandbox):
    first = [e["value"] for e in _emails(sandbox, limit=10)["data"]["emails"]]
    second = [e["value"] for e in _emails(sandbox, limit=10, offset=10)["data"]["emails"]]
    assert len(first) == len(second) == 10
    assert not set(first) & set(second)


def test_the_union_of_pages_does_not_depend_on_the_page_size(sandbox):
    big = [e["value"] for e in _emails(sandbox, limit=20)["data"]["emails"]]
    small = [
        e["value"]
        for offset in (0, 5, 10, 15)
        for e in _emails(sandbox, limit=5, offset=offset)["data"]["emails"]
    ]
    assert small == big


def test_paging_past_the_end_of_the_result_set_returns_fewer(sandbox):
    total = _emails(sandbox)["meta"]["results"]
    last = _emails(sandbox, limit=10, offset=total - 3)
    assert len(last["data"]["emails"]) == 3
    assert _emails(sandbox, limit=10, offset=total + 5)["data"]["emails"] == []


def test_a_different_filter_is_a_different_result_set(sandbox):
    acme = [e["value"] for e in _emails(sandbox)["data"]["emails"]]
    other = sandbox.call("hunter", "GET", "/v2/domain-search", query={"domain": "other.io"})
    assert acme != [e["value"] for e in other.json()["data"]["emails"]]


def test_an_x_next_token_chain_terminates_and_covers_every_result_once(sandbox):
    seen, token, pages = [], None, 0
    while True:
        query = {"query": "django", "max_results": 100}
        if token:
            query["next_token"] = token
        body = sandbox.call("x-twitter", "GET", "/2/tweets/search/recent", query=query).json()
        seen += [tweet["id"] for tweet in body["data"]]
        pages += 1
        token = body["meta"].get("next_token")
        if not token:
            break
        assert pages < 10
    assert len(seen) == len(set(seen))
    assert 120 <= len(seen) <= 480


def test_a_forged_cursor_is_refused(sandbox):
    response = sandbox.call(
        "peopledatalabs",
        "GET",
        "/v5/person/search",
        query={"sql": "SELECT * FROM person", "scroll_token": cursor_token(1, 10)},
    )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_cursor"


def test_a_reddit_after_is_the_fullname_of_the_last_post(sandbox):
    first = sandbox.call("reddit", "GET", "/r/python/hot", query={"limit": 5}).json()["data"]
    assert first["after"] == first["children"][-1]["data"]["name"]
    second = sandbox.call(
        "reddit", "GET", "/r/python/hot", query={"limit": 5, "after": first["after"]}
    ).json()["data"]
    first_ids = {child["data"]["id"] for child in first["children"]}
    assert first_ids.isdisjoint(child["data"]["id"] for child in second["children"])


def test_crunchbase_pages_after_the_uuid_of_the_last_result(sandbox):
    body = {"field_ids": ["identifier"], "limit": 3}
    first = sandbox.call("crunchbase", "POST", "/api/v4/searches/organizations", body=body).json()
    after = first["entities"][-1]["uuid"]
    second = sandbox.call(
        "crunchbase", "POST", "/api/v4/searches/organizations", body={**body, "after_id": after}
    ).json()
    both = sandbox.call(
        "crunchbase", "POST", "/api/v4/searches/organizations", body={**body, "limit": 6}
    ).json()
    assert [e["uuid"] for e in first["entities"] + second["entities"]] == [
        e["uuid"] for e in both["entities"]
    ]


@pytest.mark.parametrize(
    ("slug", "method", "path", "inputs", "page_param", "items"),
    [
        ("apollo", "POST", "/api/v1/mixed_people/search", {}, "page", "people"),
        ("theirstack", "POST", "/v1/jobs/search", {}, "page", "data"),
        ("serper", "POST", "/search", {"q": "coffee"}, "page", "organic"),
    ],
)
def test_a_page_number_moves_the_window(sandbox, slug, method, path, inputs, page_param, items):
    one = sandbox.call(slug, method, path, body=inputs).json()[items]
    two = sandbox.call(slug, method, path, body={**inputs, page_param: 2}).json()[items]
    assert one and two and one != two


def test_a_path_page_number_moves_the_adzuna_window(sandbox):
    one = sandbox.call("adzuna", "GET", "/v1/api/jobs/gb/search/1").json()["results"]
    two = sandbox.call("adzuna", "GET", "/v1/api/jobs/gb/search/2").json()["results"]
    assert {job["id"] for job in one}.isdisjoint(job["id"] for job in two)


def test_a_youtube_page_token_moves_the_window(sandbox):
    query = {"part": "snippet", "q": "django", "type": "video"}
    first = sandbox.call("youtube", "GET", "/youtube/v3/search", query=query).json()
    second = sandbox.call(
        "youtube", "GET", "/youtube/v3/search", query={**query, "pageToken": first["nextPageToken"]}
    ).json()
    assert second["prevPageToken"]
    assert first["items"] != second["items"]
