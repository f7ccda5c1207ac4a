"""Web-scraping APIs: Apify, Firecrawl, Jina Reader, ScraperAPI, ScrapingBee, ScreenshotOne."""

from django.http import HttpResponse, JsonResponse

from sandbox.call import Call
from sandbox.generators import media
from sandbox.generators.people import company
from sandbox.generators.social import iso
from sandbox.generators.web import page as web_page
from sandbox.generators.web import search_result, site_urls
from sandbox.generators.words import slugify, title_case
from sandbox.handlers.common import Reply, binary, job_for, listing
from sandbox.handlers.registry import handles
from sandbox.jobs import Job, job_decode, job_inputs, job_new

SCREENSHOT_HOST = "https://sandbox.invalid/screenshots"

# --- Apify -----------------------------------------------------------------------------------


def _actor_items(actor: str, count: int, call: Call, seed: int) -> list:
    actor = actor.lower()
    items = []
    for index in range(count):
        rng = call.item_rng(index, seed, actor)
        if "search" in actor:
            items.append({"searchQuery": {"term": "sandbox"}, **search_result(rng, actor, index)})
        elif "maps" in actor or "places" in actor:
            org = company(rng)
            items.append(
                {
                    "title": org["name"],
                    "address": f"{org['street']}, {org['city']}",
                    "phone": org["phone"],
                    "website": org["website"],
                    "totalScore": round(rng.uniform(3.2, 4.9), 1),
                    "reviewsCount": rng.randint(3, 2000),
                    "categoryName": org["industry"],
                }
            )
        else:
            page = web_page(rng, f"https://example.com/{slugify(actor)}/{index + 1}")
            items.append(
                {
                    "url": page["url"],
                    "title": page["title"],
                    "text": page["text"],
                    "markdown": page["markdown"],
                    "crawl": {"loadedUrl": page["url"], "httpStatusCode": 200, "depth": index % 3},
                }
            )
    return items


def apify_run(job: Job, done: bool) -> dict:
    inputs = job_inputs(job, {})
    actor = (
        inputs.get("actor", "apify~web-scraper")
        if isinstance(inputs, dict)
        else "apify~web-scraper"
    )
    dataset = Job(kind="apify_dataset", count=job.count, seed=job.seed, created=job.created)
    return {
        "data": {
            "id": job.hex,
            "actId": slugify(actor),
            "status": "SUCCEEDED" if done else "RUNNING",
            "statusMessage": "Finished" if done else "Crawling",
            "startedAt": iso(job.created),
            "finishedAt": iso(job.created + 2) if done else None,
            "buildNumber": "0.1.42",
            "meta": {"origin": "API"},
            "stats": {
                "durationMillis": 2000 if done else 800,
                "resultCount": job.count if done else 0,
            },
            "options": {"memoryMbytes": 1024, "timeoutSecs": 3600},
            "defaultDatasetId": dataset.hex,
            "defaultKeyValueStoreId": job.hex[:17],
            "defaultRequestQueueId": job.hex[15:],
            "usageTotalUsd": 0.0,
        }
    }


@handles("apify", "POST", "/v2/acts/{actorId}/runs")
def apify_start(call: Call):
    count = int(call.get("maxItems") or 10)
    job = job_new("apify_run", seed=call.seed, count=count, inputs={"actor": call.text("actorId")})
    return Reply(apify_run(job, done=False), status=201)


@handles("apify", "POST", "/v2/acts/{actorId}/run-sync-get-dataset-items")
def apify_run_sync(call: Call):
    count = int(call.get("maxItems") or 10)
    return Reply(_actor_items(call.text("actorId"), count, call, call.seed), status=201)


@handles("apify", "GET", "/v2/actor-runs/{runId}")
def apify_get_run(call: Call):
    job, done = job_for(call, "runId")
    if job is None:
        job = Job(kind="apify_run", count=10, seed=call.seed % 2**32, created=0)
    return apify_run(job, done)


@handles("apify", "POST", "/v2/actor-runs/{runId}/abort")
def apify_abort(call: Call):
    job = job_decode(call.text("runId")) or Job(
        kind="apify_run", count=0, seed=call.seed % 2**32, created=0
    )
    run = apify_run(job, done=True)
    run["data"].update(status="ABORTED", statusMessage="Aborted by the user", id=call.text("runId"))
    return run


@handles("apify", "GET", "/v2/datasets/{datasetId}/items")
def apify_dataset_items(call: Call):
    job = job_decode(call.text("datasetId"))
    total = job.count if job else 25
    seed = job.seed if job else call.seed
    actor = "apify~web-scraper"
    if job:
        run = Job(kind="apify_run", count=job.count, seed=job.seed, created=job.created)
        inputs = job_inputs(run, {})
        actor = inputs.get("actor", actor) if isinstance(inputs, dict) else actor
    page, _ = listing(call, lambda rng, index: None, total=total, default_size=total)
    items = _actor_items(actor, page.next_offset, call, seed)[page.offset :]
    response = JsonResponse(items, safe=False)
    response["X-Apify-Pagination-Total"] = str(total)
    response["X-Apify-Pagination-Offset"] = str(page.offset)
    response["X-Apify-Pagination-Count"] = str(len(items))
    response["X-Apify-Pagination-Limit"] = str(page.size)
    return response


@handles("apify", "GET", "/v2/store")
def apify_store(call: Call):
    search = call.text("search", "scraper")
    sources = (
        "Google Maps",
        "Instagram",
        "TikTok",
        "Amazon",
        "LinkedIn Jobs",
        "Website Content",
        "YouTube",
        "Google Search",
    )

    def make(rng, index):
        source = sources[index % len(sources)]
        name = f"{source} {title_case(search)} Scraper".replace("Scraper Scraper", "Scraper")
        username = rng.choice(("apify", "compass", "clockworks", "epctex"))
        return {
            "id": f"{rng.getrandbits(64):017x}"[:17],
            "title": name,
            "name": slugify(name),
            "username": username,
            "description": f"Extract data from {source}.",
            "stats": {
                "totalUsers": rng.randint(100, 90000),
                "totalRuns": rng.randint(1000, 9000000),
            },
            "currentPricingInfo": {
                "pricingModel": rng.choice(("PAY_PER_EVENT", "FREE", "PRICE_PER_DATASET_ITEM"))
            },
            "url": f"https://apify.com/{username}/{slugify(name)}",
        }

    page, items = listing(call, make, total=40 + call.set_seed % 200)
    return {
        "data": {
            "total": page.total,
            "offset": page.offset,
            "limit": page.size,
            "count": len(items),
            "desc": False,
            "items": items,
        }
    }


@handles("apify", "GET", "/v2/users/me")
def apify_me(call: Call):
    return {
        "data": {
            "id": "SandboxUser00001",
            "username": "sandbox",
            "profile": {"name": "Sandbox User"},
            "email": "sandbox@example.com",
            "plan": {"id": "STARTER", "monthlyUsageCreditsUsd": 49, "maxActorMemoryGbytes": 32},
            "effectivePlatformFeatures": {"ACTORS": {"isEnabled": True}},
        }
    }


# --- Firecrawl -------------------------------------------------------------------------------


def firecrawl_document(rng, url: str, formats: list, prompt: str = "") -> dict:
    page = web_page(rng, url, prompt)
    document = {
        "metadata": {
            "title": page["title"],
            "description": page["description"],
            "language": "en",
            "sourceURL": url,
            "url": url,
            "statusCode": 200,
        }
    }
    for name in formats or ["markdown"]:
        if name == "markdown":
            document["markdown"] = page["markdown"]
        elif name == "html":
            document["html"] = page["html"]
        elif name == "rawHtml":
            document["rawHtml"] = page["html"]
        elif name == "links":
            document["links"] = page["links"]
        elif name.startswith("screenshot"):
            document["screenshot"] = f"{SCREENSHOT_HOST}/{slugify(url)}.png"
        elif name == "json":
            document["json"] = {"title": page["title"], "summary": page["description"]}
    return document


@handles("firecrawl", "POST", "/v1/scrape")
def firecrawl_scrape(call: Call):
    formats = call.get("formats") or ["markdown"]
    return {"success": True, "data": firecrawl_document(call.rng(), call.text("url"), formats)}


def _firecrawl_status(call: Call, kind: str, urls_for) -> dict:
    job, done = job_for(call, "id")
    seed = job.seed if job else call.seed
    inputs = (job_inputs(job) if job else None) or {}
    urls = urls_for(job, inputs, seed)
    formats = inputs.get("formats") or ["markdown"]
    finished = urls if done else urls[: len(urls) // 3]
    data = [
        firecrawl_document(call.item_rng(n, seed), url, formats) for n, url in enumerate(finished)
    ]
    return {
        "success": True,
        "status": "completed" if done else "scraping",
        "total": len(urls),
        "completed": len(finished),
        "creditsUsed": len(finished),
        "expiresAt": iso((job.created if job else 0) + 86400),
        "next": None,
        "data": data,
    }


def _started(job: Job, path: str) -> dict:
    return {"success": True, "id": job.uuid, "url": f"https://api.firecrawl.dev{path}/{job.uuid}"}


@handles("firecrawl", "POST", "/v1/crawl")
def firecrawl_crawl(call: Call):
    limit = int(call.get("limit") or 10)
    scrape = call.get("scrapeOptions") or {}
    inputs = {
        "url": call.text("url"),
        "formats": scrape.get("formats") if isinstance(scrape, dict) else None,
    }
    return _started(
        job_new("firecrawl_crawl", seed=call.seed, count=limit, inputs=inputs), "/v1/crawl"
    )


@handles("firecrawl", "GET", "/v1/crawl/{id}")
def firecrawl_crawl_status(call: Call):
    def urls(job, inputs, seed):
        count = min(job.count if job else 10, 5 + seed % 40)
        return site_urls(
            call.item_rng(0, seed, "site"), inputs.get("url") or "https://example.com", count
        )

    return _firecrawl_status(call, "crawl", urls)


@handles("firecrawl", "DELETE", "/v1/crawl/{id}")
def firecrawl_cancel(call: Call):
    return {"status": "cancelled"}


@handles("firecrawl", "POST", "/v1/map")
def firecrawl_map(call: Call):
    rng = call.rng()
    limit = int(call.get("limit") or 5000)
    count = min(limit, 20 + call.seed % 180)
    links = site_urls(rng, call.text("url"), count)
    search = call.text("search").lower()
    if search:
        links = sorted(links, key=lambda link: search not in link)
    return {"success": True, "links": links}


@handles("firecrawl", "POST", "/v1/batch/scrape")
def firecrawl_batch(call: Call):
    urls = call.body["urls"]
    inputs = {"urls": urls, "formats": call.get("formats")}
    job = job_new("firecrawl_batch", seed=call.seed, count=len(urls), inputs=inputs)
    body = _started(job, "/v1/batch/scrape")
    body["invalidURLs"] = []
    return body


@handles("firecrawl", "GET", "/v1/batch/scrape/{id}")
def firecrawl_batch_status(call: Call):
    def urls(job, inputs, seed):
        if inputs.get("urls"):
            return list(inputs["urls"])
        return [f"https://example.com/page-{n + 1}" for n in range(job.count if job else 3)]

    return _firecrawl_status(call, "batch", urls)


@handles("firecrawl", "POST", "/v1/extract")
def firecrawl_extract(call: Call):
    urls = call.body["urls"]
    inputs = {"urls": urls, "prompt": call.text("prompt"), "schema": call.get("schema")}
    job = job_new("firecrawl_extract", seed=call.seed, count=len(urls), inputs=inputs)
    return {"success": True, "id": job.uuid, "urlTrace": []}


def _from_schema(schema: dict, rng, topic: str):
    kind = schema.get("type", "object")
    if kind == "object":
        properties = schema.get("properties") or {
            "title": {"type": "string"},
            "summary": {"type": "string"},
        }
        return {
            name: _from_schema(sub if isinstance(sub, dict) else {}, rng, name)
            for name, sub in properties.items()
        }
    if kind == "array":
        return [
            _from_schema(schema.get("items") or {"type": "string"}, rng, topic) for _ in range(3)
        ]
    if kind in ("number", "integer"):
        return rng.randint(1, 500) if kind == "integer" else round(rng.uniform(1, 500), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    return f"{title_case(topic)} {rng.randint(1, 99)}"


@handles("firecrawl", "GET", "/v1/extract/{id}")
def firecrawl_extract_status(call: Call):
    job, done = job_for(call, "id")
    inputs = (job_inputs(job) if job else None) or {}
    if not done:
        return {
            "success": True,
            "status": "processing",
            "data": None,
            "expiresAt": iso((job.created if job else 0) + 86400),
        }
    rng = call.item_rng(0, job.seed if job else call.seed, "extract")
    schema = inputs.get("schema") if isinstance(inputs.get("schema"), dict) else {}
    return {
        "success": True,
        "status": "completed",
        "data": _from_schema(schema, rng, inputs.get("prompt") or "item"),
        "expiresAt": iso((job.created if job else 0) + 86400),
    }


@handles("firecrawl", "POST", "/v1/search")
def firecrawl_search(call: Call):
    query = call.text("query")
    limit = int(call.get("limit") or 5)
    scrape = call.get("scrapeOptions") or {}
    formats = scrape.get("formats") if isinstance(scrape, dict) else None
    data = []
    for index in range(limit):
        rng = call.rng(index)
        result = search_result(rng, query, index)
        item = {"url": result["url"], "title": result["title"], "description": result["snippet"]}
        if formats:
            item.update({k: v for k, v in firecrawl_document(rng, result["url"], formats).items()})
        data.append(item)
    return {"success": True, "data": data}


@handles("firecrawl", "GET", "/v1/team/credit-usage")
def firecrawl_credits(call: Call):
    return {"success": True, "data": {"remaining_credits": 48210}}


# --- Jina Reader -----------------------------------------------------------------------------


@handles("jina-reader", "POST", "/")
def jina_read(call: Call):
    page = web_page(call.rng(), call.text("url"))
    tokens = len(page["markdown"]) // 4
    if "application/json" in call.request.headers.get("Accept", ""):
        return {
            "code": 200,
            "status": 20000,
            "data": {
                "title": page["title"],
                "description": page["description"],
                "url": page["url"],
                "content": page["markdown"],
                "usage": {"tokens": tokens},
            },
            "meta": {"usage": {"tokens": tokens}},
        }
    text = (
        f"Title: {page['title']}\n\nURL Source: {page['url']}\n\n"
        f"Markdown Content:\n{page['markdown']}\n"
    )
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


# --- ScraperAPI ------------------------------------------------------------------------------


@handles("scraperapi", "GET", "/")
def scraperapi_fetch(call: Call):
    page = web_page(call.rng(), call.text("url"))
    output = call.text("output_format")
    if output == "markdown":
        return HttpResponse(page["markdown"], content_type="text/markdown; charset=utf-8")
    if output == "text":
        return HttpResponse(page["text"], content_type="text/plain; charset=utf-8")
    if call.get("autoparse"):
        return {
            "url": page["url"],
            "title": page["title"],
            "description": page["description"],
            "links": page["links"],
        }
    return HttpResponse(page["html"], content_type="text/html; charset=utf-8")


def _google_serp(call: Call, query: str, default_size: int = 10) -> dict:
    page, results = listing(
        call, lambda rng, index: search_result(rng, query, index), default_size=default_size
    )
    return page, results


@handles("scraperapi", "GET", "/structured/google/search")
def scraperapi_google(call: Call):
    query = call.text("query")
    page, results = _google_serp(call, query)
    return {
        "search_information": {"total_results": page.total * 1000, "query_displayed": query},
        "organic_results": [
            {
                "position": r["position"],
                "title": r["title"],
                "snippet": r["snippet"],
                "link": r["url"],
                "displayed_link": r["domain"],
            }
            for r in results
        ],
        "related_questions": [{"question": f"What is {query}?", "position": 1}],
        "pagination": {"current": page.number, "next_page_url": None},
    }


def _amazon_product(rng, asin: str, query: str = "") -> dict:
    name = title_case(
        query or rng.choice(("wireless headphones", "standing desk", "coffee grinder", "usb c hub"))
    )
    price = round(rng.uniform(9, 400), 2)
    return {
        "asin": asin,
        "name": f"{name} {rng.choice(('Pro', 'Max', 'Mini', '2025 Edition'))}",
        "price": price,
        "price_string": f"${price:,.2f}",
        "stars": round(rng.uniform(3.5, 4.9), 1),
        "total_reviews": rng.randint(3, 40000),
        "url": f"https://www.amazon.com/dp/{asin}",
        "image": f"https://m.media-amazon.com/images/I/{asin}.jpg",
        "has_prime": rng.random() < 0.7,
    }


@handles("scraperapi", "GET", "/structured/amazon/product")
def scraperapi_amazon_product(call: Call):
    rng = call.rng()
    product = _amazon_product(rng, call.text("asin"))
    return {
        **{k: product[k] for k in ("name", "price", "stars", "total_reviews", "url", "image")},
        "product_information": {
            "ASIN": product["asin"],
            "Customer Reviews": f"{product['stars']} out of 5 stars",
        },
        "pricing": product["price_string"],
        "average_rating": product["stars"],
        "feature_bullets": [
            f"{title_case(word)} design" for word in ("compact", "durable", "quiet")
        ],
        "images": [product["image"]],
        "availability_status": "In Stock",
    }


@handles("scraperapi", "GET", "/structured/amazon/search")
def scraperapi_amazon_search(call: Call):
    query = call.text("query")
    page, results = listing(
        call,
        lambda rng, index: {
            "type": "search_product",
            "position": index + 1,
            **_amazon_product(rng, f"B0{rng.getrandbits(32):08X}", query),
        },
        default_size=16,
    )
    return {
        "ads": [],
        "results": results,
        "explore_more_items": [],
        "next_pages": [f"https://www.amazon.com/s?k={slugify(query)}&page={page.number + 1}"]
        if page.has_more
        else [],
    }


@handles("scraperapi", "GET", "/account")
def scraperapi_account(call: Call):
    return {
        "concurrencyLimit": 20,
        "concurrentRequests": 0,
        "failedRequestCount": 3,
        "requestCount": 1840,
        "requestLimit": 100000,
        "subscriptionDate": "2025-11-01T00:00:00.000Z",
    }


# --- ScrapingBee -----------------------------------------------------------------------------


@handles("scrapingbee", "GET", "/api/v1/")
def scrapingbee_scrape(call: Call):
    page = web_page(call.rng(), call.text("url"), call.text("ai_query"))
    if call.get("screenshot") or call.get("screenshot_full_page"):
        return binary(media.png(64, 96 if call.get("screenshot_full_page") else 40), "image/png")
    if call.text("extract_rules") or call.text("ai_query"):
        return {
            "title": page["title"],
            "description": page["description"],
            "links": page["links"][:3],
        }
    content = page["text"] if call.get("return_page_text") else page["html"]
    if call.get("json_response"):
        return {
            "body": content,
            "xhr": [],
            "cookies": [],
            "initial-status-code": 200,
            "resolved-url": page["url"],
            "type": "html",
            "headers": {"content-type": "text/html"},
        }
    response = HttpResponse(
        content,
        content_type="text/plain; charset=utf-8"
        if call.get("return_page_text")
        else "text/html; charset=utf-8",
    )
    response["Spb-Cost"] = "5" if call.get("render_js", True) else "1"
    response["Spb-Initial-Status-Code"] = "200"
    response["Spb-Resolved-Url"] = page["url"]
    return response


@handles("scrapingbee", "GET", "/api/v1/store/google")
def scrapingbee_google(call: Call):
    query = call.text("search")
    page, results = listing(
        call,
        lambda rng, index: search_result(rng, query, index),
        default_size=100,
        size=int(call.get("nb_results") or 100),
    )
    return {
        "meta_data": {
            "url": f"https://www.google.com/search?q={slugify(query)}",
            "number_of_results": page.total * 1000,
            "location": None,
            "number_of_organic_results": len(results),
        },
        "organic_results": [
            {
                "position": r["position"],
                "title": r["title"],
                "description": r["snippet"],
                "url": r["url"],
                "domain": r["domain"],
                "date": r["date"],
            }
            for r in results
        ],
        "related_queries": [
            {"title": f"{query} {suffix}"} for suffix in ("tutorial", "pricing", "alternatives")
        ],
        "top_ads": [],
    }


@handles("scrapingbee", "GET", "/api/v1/usage")
def scrapingbee_usage(call: Call):
    return {
        "max_api_credit": 150000,
        "used_api_credit": 2310,
        "max_concurrency": 10,
        "current_concurrency": 0,
        "renewal_subscription_date": "2026-01-01T00:00:00",
    }


# --- ScreenshotOne ---------------------------------------------------------------------------


@handles("screenshotone", "GET", "/take")
def screenshotone_take(call: Call):
    target = call.text("url") or "html"
    format_name = call.text("format", "jpg")
    if call.text("response_type") == "json":
        return {"cache_url": f"{SCREENSHOT_HOST}/{slugify(target)}.{format_name}", "store": None}
    if call.text("response_type") == "empty":
        return HttpResponse(b"", status=200)
    if format_name == "pdf":
        return binary(media.pdf(web_page(call.rng(), target)["title"]), "application/pdf")
    content, content_type = media.image(format_name, call.seed % 10_000)
    return binary(content, content_type)


@handles("screenshotone", "GET", "/animate")
def screenshotone_animate(call: Call):
    format_name = call.text("format", "mp4")
    if format_name == "gif":
        return binary(media.GIF, "image/gif")
    content_type = {"webm": "video/webm", "mov": "video/quicktime", "avi": "video/x-msvideo"}.get(
        format_name, "video/mp4"
    )
    return binary(media.MP4, content_type)


@handles("screenshotone", "GET", "/usage")
def screenshotone_usage(call: Call):
    return {
        "total": 10000,
        "available": 9120,
        "used": 880,
        "concurrency": {"limit": 10, "remaining": 10, "reset": 1735689600},
    }
