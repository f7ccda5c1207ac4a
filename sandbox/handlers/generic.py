"""Answers for operations without a provider-specific shape, chosen by the kind of endpoint.

The kind comes from the API's category and keywords in the operation's path, id and summary
(``search``, ``verify``, ``screenshot``, ``account``...). Lists are paged like every sandbox
list, and a per-result operation gets its items at its ``resultsPath``.
"""

import re

from sandbox.call import Call
from sandbox.generators import media
from sandbox.generators.emails import verdict
from sandbox.generators.people import company, person
from sandbox.generators.postings import posting
from sandbox.generators.social import tweet
from sandbox.generators.web import page as web_page
from sandbox.generators.web import search_result
from sandbox.handlers.common import binary, first_text, job_for, listing, set_path
from sandbox.jobs import job_new
from sandbox.spec import ApiSpec, Operation

ACCOUNT = re.compile(
    r"account|credit|usage|balance|/stats|/users/me|/user$|auth/health|getcredits|getapiusage"
)


def kind_of(api: ApiSpec, operation: Operation) -> str:
    text, template = operation.text, operation.template.lower()
    if operation.category == "llm":
        return "embeddings" if "embedding" in text else "chat"
    if operation.poll:
        return "job_start"
    if (operation.method, operation.template) in api.poll_targets:
        return "job_status"
    if ACCOUNT.search(template):
        return "account"
    if "screenshot" in text:
        return "screenshot"
    if "verif" in text or "validat" in text:
        return "email_verdict"
    if operation.category == "web-scraping":
        return "page"
    if operation.category == "web-search":
        return "web_search"
    if operation.category == "jobs":
        return "postings"
    if operation.category == "social-media":
        return "posts"
    is_list = "search" in text or operation.per_result or operation.pagination
    if "compan" in text or "organization" in text or operation.category == "company-enrichment":
        return "companies" if is_list else "company"
    return "people" if is_list else "person"


def _items(call: Call, make, key: str = "data") -> dict:
    page, items = listing(call, make)
    per_result = call.op.per_result
    body = {"meta": {"total": page.total, "offset": page.offset, "count": len(items)}}
    if page.next_cursor:
        body["meta"]["next_cursor"] = page.next_cursor
    return set_path(body, per_result["resultsPath"] if per_result else key, items)


def _account(call: Call) -> dict:
    rng = call.rng()
    limit = rng.choice((1000, 5000, 10000, 50000))
    used = rng.randint(0, limit // 2)
    return {
        "plan": rng.choice(("starter", "growth", "pro")),
        "credits": {"limit": limit, "used": used, "remaining": limit - used},
        "reset_date": "2026-01-01",
        "sandbox": True,
    }


def _job_start(call: Call) -> dict:
    job = job_new("generic", seed=call.seed)
    return {"id": job.uuid, "status": "pending", "poll": call.op.poll}


def _job_status(call: Call) -> dict:
    name = next((p.name for p in call.op.params if p.location == "path"), "id")
    _job, done = job_for(call, name)
    body = {"id": call.text(name), "status": "completed" if done else "in_progress"}
    if done:
        body["data"] = [search_result(call.item_rng(index), call.slug, index) for index in range(5)]
    return body


def _generic(kind: str):
    def answer(call: Call):
        query = first_text(call, "q", "query", "search", "keyword", "what", default=call.slug)
        if kind == "account":
            return _account(call)
        if kind == "job_start":
            return _job_start(call)
        if kind == "job_status":
            return _job_status(call)
        if kind == "screenshot":
            content, content_type = media.image(call.text("format", "png"), call.seed % 10_000)
            return binary(content, content_type)
        if kind == "email_verdict":
            result = verdict(first_text(call, "email", default="someone@example.com"))
            return {"email": result.email, "status": result.status, "score": result.score}
        if kind == "page":
            page = web_page(call.rng(), first_text(call, "url", default="https://example.com"))
            return {"data": {key: page[key] for key in ("url", "title", "markdown", "links")}}
        if kind == "web_search":
            return _items(call, lambda rng, index: search_result(rng, query, index), "results")
        if kind == "postings":
            return _items(call, lambda rng, index: posting(rng, what=query, index=index), "jobs")
        if kind == "posts":
            return _items(call, lambda rng, index: tweet(rng, query, index))
        if kind == "companies":
            return _items(call, lambda rng, index: company(rng))
        if kind == "company":
            return {"data": company(call.rng(), domain=call.text("domain") or None)}
        if kind == "people":
            return _items(call, lambda rng, index: person(rng))
        return {"data": person(call.rng(), domain=call.text("domain") or None)}

    return answer


def generic_handler(api: ApiSpec, operation: Operation):
    kind = kind_of(api, operation)
    if kind in ("chat", "embeddings"):
        from sandbox.handlers import llm

        return llm.chat_completion if kind == "chat" else llm.embeddings
    return _generic(kind)
