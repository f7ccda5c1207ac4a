"""Asynchronous jobs need no database: the id carries the job, the cache counts polls."""

import time

from django.core.cache import cache

from sandbox.jobs import job_decode


def test_a_firecrawl_crawl_is_in_progress_on_the_first_poll_and_complete_on_the_second(sandbox):
    started = sandbox.call(
        "firecrawl", "POST", "/v1/crawl", body={"url": "https://acme.io", "limit": 7}
    )
    job_id = started.json()["id"]
    first = sandbox.call("firecrawl", "GET", f"/v1/crawl/{job_id}").json()
    second = sandbox.call("firecrawl", "GET", f"/v1/crawl/{job_id}").json()
    assert first["status"] == "scraping"
    assert second["status"] == "completed"
    assert second["completed"] == second["total"] == len(second["data"]) <= 7
    assert all(
        page["metadata"]["sourceURL"].startswith("https://acme.io") for page in second["data"]
    )


def test_every_start_endpoint_has_a_poll_that_completes(sandbox):
    cases = [
        (
            "apify",
            "POST",
            "/v2/acts/apify~web-scraper/runs",
            {},
            ("data", "id"),
            "/v2/actor-runs/{}",
        ),
        (
            "contactout",
            "POST",
            "/v2/people/linkedin/batch",
            {"profiles": ["https://www.linkedin.com/in/ann"]},
            ("job_id",),
            "/v2/people/linkedin/batch/{}",
        ),
        (
            "dropcontact",
            "POST",
            "/v1/enrich/all",
            {"data": [{"email": "ann@acme.io"}]},
            ("request_id",),
            "/v1/enrich/all/{}",
        ),
        (
            "firecrawl",
            "POST",
            "/v1/batch/scrape",
            {"urls": ["https://acme.io/a"]},
            ("id",),
            "/v1/batch/scrape/{}",
        ),
        (
            "firecrawl",
            "POST",
            "/v1/extract",
            {"urls": ["https://acme.io/*"]},
            ("id",),
            "/v1/extract/{}",
        ),
        (
            "snov",
            "POST",
            "/v2/domain-search/start",
            {"domain": "acme.io"},
            ("data", "task_hash"),
            "/v2/domain-search/result/{}",
        ),
        (
            "snov",
            "POST",
            "/v2/domain-search/prospects/start",
            {"domain": "acme.io"},
            ("data", "task_hash"),
            "/v2/domain-search/prospects/result/{}",
        ),
        (
            "snov",
            "POST",
            "/v2/domain-search/domain-emails/start",
            {"domain": "acme.io"},
            ("data", "task_hash"),
            "/v2/domain-search/domain-emails/result/{}",
        ),
    ]
    for slug, method, path, body, id_path, poll in cases:
        answer = sandbox.call(slug, method, path, body=body).json()
        for key in id_path:
            answer = answer[key]
        first = sandbox.call(slug, "GET", poll.format(answer))
        second = sandbox.call(slug, "GET", poll.format(answer))
        assert first.status_code == second.status_code == 200
        assert first.content != second.content, (slug, path)


def test_a_batch_reveal_answers_for_the_submitted_profiles(sandbox):
    profiles = ["https://www.linkedin.com/in/ann", "https://www.linkedin.com/in/bob"]
    job_id = sandbox.call(
        "contactout", "POST", "/v2/people/linkedin/batch", body={"profiles": profiles}
    ).json()["job_id"]
    assert (
        sandbox.call("contactout", "GET", f"/v2/people/linkedin/batch/{job_id}").json()["data"][
            "status"
        ]
        == "SENT"
    )
    done = sandbox.call("contactout", "GET", f"/v2/people/linkedin/batch/{job_id}").json()["data"]
    assert done["status"] == "DONE"
    assert sorted(done["result"]) == profiles


def test_the_same_start_gives_the_same_result_once_complete(sandbox, monkeypatch):
    from sandbox import jobs

    results = []
    for later in (0, 7):
        # The second job starts seconds later, so its id differs from the first's.
        monkeypatch.setattr(jobs.time, "time", lambda later=later: 1_800_000_000 + later)
        job = sandbox.call(
            "snov",
            "POST",
            "/v2/domain-search/domain-emails/start",
            body={"domain": "acme.io", "limit": 4},
        ).json()
        poll = f"/v2/domain-search/domain-emails/result/{job['data']['task_hash']}"
        sandbox.call("snov", "GET", poll)
        body = sandbox.call("snov", "GET", poll).json()
        results.append(body["data"])
    assert results[0] == results[1]
    assert len(results[0]) == 4


def test_a_worker_whose_cache_does_not_know_the_job_completes_it_after_two_seconds(
    sandbox, monkeypatch
):
    job_id = sandbox.call("firecrawl", "POST", "/v1/crawl", body={"url": "https://acme.io"}).json()[
        "id"
    ]
    cache.clear()
    assert sandbox.call("firecrawl", "GET", f"/v1/crawl/{job_id}").json()["status"] == "scraping"
    created = job_decode(job_id).created
    monkeypatch.setattr(time, "time", lambda: created + 2.5)
    assert sandbox.call("firecrawl", "GET", f"/v1/crawl/{job_id}").json()["status"] == "completed"


def test_a_poll_with_an_id_the_sandbox_did_not_issue_gets_a_finished_job(sandbox):
    response = sandbox.call("firecrawl", "GET", "/v1/crawl/not-a-sandbox-id")
    assert response.status_code == 200
    assert response.json()["status"] == "completed"


def test_an_apify_run_leads_to_its_dataset_items(sandbox):
    run = sandbox.call(
        "apify", "POST", "/v2/acts/apify~website-content-crawler/runs", query={"maxItems": 6}
    ).json()["data"]
    assert run["status"] == "RUNNING"
    sandbox.call("apify", "GET", f"/v2/actor-runs/{run['id']}")
    finished = sandbox.call("apify", "GET", f"/v2/actor-runs/{run['id']}").json()["data"]
    assert finished["status"] == "SUCCEEDED"
    items = sandbox.call("apify", "GET", f"/v2/datasets/{finished['defaultDatasetId']}/items")
    assert len(items.json()) == 6
    assert items["X-Apify-Pagination-Total"] == "6"
    tail = sandbox.call(
        "apify", "GET", f"/v2/datasets/{finished['defaultDatasetId']}/items", query={"offset": 4}
    )
    assert tail.json() == items.json()[4:]


def test_serpapi_async_search_is_read_back_from_the_archive(sandbox):
    query = {"q": "coffee", "async": "true"}
    started = sandbox.call("serpapi", "GET", "/search", query=query).json()["search_metadata"]
    assert started["status"] == "Processing"
    archive = f"/searches/{started['id']}.json"
    assert (
        sandbox.call("serpapi", "GET", archive).json()["search_metadata"]["status"] == "Processing"
    )
    done = sandbox.call("serpapi", "GET", archive).json()
    assert done["search_metadata"]["status"] == "Success"
    assert done["search_parameters"]["q"] == "coffee"
    assert done["organic_results"]


def test_query_parameter_job_results_go_from_in_progress_to_complete(sandbox):
    started = sandbox.call(
        "snov",
        "POST",
        "/v2/email-verification/start",
        body={"emails": ["ann@acme.io", "invalid@acme.io"]},
    ).json()
    task = started["data"]["task_hash"]
    assert (
        sandbox.call(
            "snov", "GET", "/v2/email-verification/result", query={"task_hash": task}
        ).json()["status"]
        == "in_progress"
    )
    done = sandbox.call(
        "snov", "GET", "/v2/email-verification/result", query={"task_hash": task}
    ).json()
    assert done["status"] == "completed"
    assert done["data"][1]["result"]["smtp_status"] == "not_valid"


def test_a_neverbounce_job_has_an_integer_id_and_completes(sandbox):
    rows = [{"email": "ann@acme.io"}, {"email": "bounce@acme.io"}]
    job_id = sandbox.call(
        "neverbounce",
        "POST",
        "/v4.2/jobs/create",
        body={"input_location": "supplied", "input": rows},
    ).json()["job_id"]
    assert isinstance(job_id, int)
    first = sandbox.call("neverbounce", "GET", "/v4.2/jobs/status", query={"job_id": job_id}).json()
    second = sandbox.call(
        "neverbounce", "GET", "/v4.2/jobs/status", query={"job_id": job_id}
    ).json()
    assert (first["job_status"], second["job_status"]) == ("running", "complete")
    results = sandbox.call(
        "neverbounce", "GET", "/v4.2/jobs/results", query={"job_id": job_id}
    ).json()
    assert [r["verification"]["result"] for r in results["results"]] == ["valid", "invalid"]
