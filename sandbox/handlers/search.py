"""Web-search APIs: Brave Search, Exa, SerpApi, Serper, Tavily."""

from sandbox.call import Call
from sandbox.generators.people import company
from sandbox.generators.postings import posting
from sandbox.generators.web import page as web_page
from sandbox.generators.web import search_result, site_urls
from sandbox.generators.words import CITIES, paragraph, sentence, slugify, title_case
from sandbox.handlers.common import job_for, listing
from sandbox.handlers.registry import handles
from sandbox.jobs import job_inputs, job_new

PLACE_KINDS = ("Studio", "House", "Center", "Co")

# --- Brave Search ----------------------------------------------------------------------------


def _brave_result(r: dict, kind: str = "search_result") -> dict:
    return {
        "type": kind,
        "title": r["title"],
        "url": r["url"],
        "description": r["snippet"],
        "age": r["date"],
        "page_age": r["date"] + "T00:00:00",
        "language": "en",
        "family_friendly": True,
        "meta_url": {
            "scheme": "https",
            "netloc": r["domain"],
            "hostname": r["domain"],
            "path": "\u203a " + r["url"].rsplit("/", 1)[-1],
        },
    }


@handles("brave-search", "GET", "/res/v1/web/search")
def brave_web(call: Call):
    query = call.text("q")
    page, results = listing(
        call, lambda rng, index: _brave_result(search_result(rng, query, index)), default_size=20
    )
    return {
        "type": "search",
        "query": {
            "original": query,
            "show_strict_warning": False,
            "is_navigational": False,
            "country": call.text("country", "us").lower(),
            "more_results_available": page.has_more,
        },
        "mixed": {
            "type": "mixed",
            "main": [{"type": "web", "index": n, "all": False} for n in range(len(results))],
        },
        "web": {"type": "search", "results": results, "family_friendly": True},
    }


@handles("brave-search", "GET", "/res/v1/news/search")
def brave_news(call: Call):
    query = call.text("q")

    def make(rng, index):
        item = _brave_result(search_result(rng, query, index), "news_result")
        item["meta_url"]["hostname"] = rng.choice(
            ("www.reuters.com", "www.bbc.co.uk", "techcrunch.com")
        )
        item["thumbnail"] = {"src": f"https://imgs.search.brave.com/{slugify(query)}-{index}.jpg"}
        return item

    _page, results = listing(call, make, default_size=20)
    return {"type": "news", "query": {"original": query}, "results": results}


@handles("brave-search", "GET", "/res/v1/images/search")
def brave_images(call: Call):
    query = call.text("q")
    count = int(call.get("count") or 50)
    results = []
    for index in range(count):
        rng = call.rng(index)
        r = search_result(rng, query, index)
        width, height = rng.choice(((1200, 800), (800, 600), (1920, 1080), (640, 640)))
        results.append(
            {
                "type": "image_result",
                "title": r["title"],
                "url": r["url"],
                "source": r["domain"],
                "thumbnail": {"src": f"https://imgs.search.brave.com/{slugify(query)}-{index}.jpg"},
                "properties": {
                    "url": f"https://{r['domain']}/images/{slugify(query)}-{index}.jpg",
                    "width": width,
                    "height": height,
                },
            }
        )
    return {"type": "images", "query": {"original": query}, "results": results}


@handles("brave-search", "GET", "/res/v1/videos/search")
def brave_videos(call: Call):
    query = call.text("q")

    def make(rng, index):
        item = _brave_result(search_result(rng, query, index), "video_result")
        item["video"] = {
            "duration": f"{rng.randint(1, 40)}:{rng.randint(0, 59):02d}",
            "views": rng.randint(100, 5_000_000),
            "creator": title_case(rng.choice(("tech", "daily", "lab")) + " channel"),
            "publisher": "YouTube",
        }
        return item

    _page, results = listing(call, make, default_size=20)
    return {"type": "videos", "query": {"original": query}, "results": results}


@handles("brave-search", "GET", "/res/v1/suggest/search")
def brave_suggest(call: Call):
    query = call.text("q")
    count = int(call.get("count") or 5)
    suffixes = (
        "",
        " meaning",
        " near me",
        " tutorial",
        " vs",
        " price",
        " review",
        " api",
        " login",
        " alternatives",
    )
    return {
        "type": "suggest",
        "query": {"original": query},
        "results": [{"query": f"{query}{suffix}".strip()} for suffix in suffixes[:count]],
    }


# The benchmarks' fast endpoint: a fixed-price GET whose answer needs no generator at all.
@handles("brave-search", "GET", "/res/v1/spellcheck/search")
def brave_spellcheck(call: Call):
    query = call.text("q")
    return {
        "type": "spellcheck",
        "query": {"original": query},
        "results": [{"query": query.strip().lower()}],
    }


# --- Exa ---------------------------------------------------------------------------------------


def _exa_result(rng, r: dict, contents) -> dict:
    item = {
        "id": r["url"],
        "url": r["url"],
        "title": r["title"],
        "score": r["score"],
        "publishedDate": r["date"] + "T00:00:00.000Z",
        "author": r["author"],
    }
    contents = contents if isinstance(contents, dict) else {}
    if contents.get("text"):
        item["text"] = web_page(rng, r["url"])["text"]
    if contents.get("highlights"):
        item["highlights"] = [r["snippet"]]
        item["highlightScores"] = [round(rng.uniform(0.3, 0.9), 3)]
    if contents.get("summary"):
        item["summary"] = sentence(rng, r["title"])
    return item


@handles("exa", "POST", "/search")
def exa_search(call: Call):
    query = call.text("query")
    count = int(call.get("numResults") or 10)
    contents = call.get("contents")
    results = [
        _exa_result(call.rng(index), search_result(call.rng(index), query, index), contents)
        for index in range(count)
    ]
    return {
        "requestId": f"{call.seed:032x}"[:32],
        "resolvedSearchType": "neural" if call.text("type", "auto") != "keyword" else "keyword",
        "results": results,
        "costDollars": {"total": 0.005},
    }


@handles("exa", "POST", "/contents")
def exa_contents(call: Call):
    results = []
    for index, url in enumerate(call.body["urls"]):
        rng = call.rng(index)
        page = web_page(rng, str(url))
        item = {"id": page["url"], "url": page["url"], "title": page["title"], "author": None}
        if call.get("text", True):
            item["text"] = page["text"]
        if call.get("highlights"):
            item["highlights"] = [page["description"]]
        if call.get("summary"):
            item["summary"] = sentence(rng, page["title"])
        results.append(item)
    return {
        "requestId": f"{call.seed:032x}"[:32],
        "results": results,
        "statuses": [{"id": r["id"], "status": "success"} for r in results],
        "costDollars": {"total": 0.001 * len(results)},
    }


@handles("exa", "POST", "/findSimilar")
def exa_similar(call: Call):
    url = call.text("url")
    count = int(call.get("numResults") or 10)
    topic = url.rstrip("/").rsplit("/", 1)[-1].replace("-", " ")
    results = [
        _exa_result(
            call.rng(index), search_result(call.rng(index), topic, index), call.get("contents")
        )
        for index in range(count)
    ]
    return {
        "requestId": f"{call.seed:032x}"[:32],
        "results": results,
        "costDollars": {"total": 0.005},
    }


@handles("exa", "POST", "/answer")
def exa_answer(call: Call):
    query = call.text("query")
    rng = call.rng()
    citations = []
    for index in range(3):
        r = search_result(call.rng(index), query, index)
        citation = {
            "id": r["url"],
            "url": r["url"],
            "title": r["title"],
            "publishedDate": r["date"],
            "author": r["author"],
        }
        if call.get("text"):
            citation["text"] = web_page(call.rng(index), r["url"])["text"]
        citations.append(citation)
    return {
        "answer": f"{title_case(query)}: {paragraph(rng, query, 2)}",
        "citations": citations,
        "costDollars": {"total": 0.005},
    }


# --- SerpApi ---------------------------------------------------------------------------------


def _serpapi_results(call: Call) -> dict:
    engine = call.text("engine", "google")
    query = call.text("q")
    page, results = listing(call, lambda rng, index: search_result(rng, query, index))
    body = {
        "search_parameters": {
            "engine": engine,
            "q": query,
            "google_domain": call.text("google_domain", "google.com"),
            "device": call.text("device", "desktop"),
        }
    }
    body["search_information"] = {
        "organic_results_state": "Results for exact spelling",
        "query_displayed": query,
        "total_results": page.total * 1000,
    }
    if engine == "google_jobs":
        body["jobs_results"] = [
            {
                "title": p["title"],
                "company_name": p["company"]["name"],
                "location": p["location"],
                "via": "LinkedIn",
                "description": p["description"][:300],
                "job_id": p["id"],
            }
            for p in (
                posting(call.item_rng(index), what=query, index=index) for index in page.indices
            )
        ]
    elif engine in ("google_maps", "google_local"):
        body["local_results"] = [
            {
                "position": index + 1,
                "title": org["name"],
                "address": f"{org['street']}, {org['city']}",
                "phone": org["phone"],
                "rating": round(call.item_rng(index).uniform(3.2, 4.9), 1),
                "website": org["website"],
            }
            for index, org in ((i, company(call.item_rng(i))) for i in page.indices)
        ]
    elif engine == "youtube":
        body["video_results"] = [
            {
                "position_on_page": r["position"],
                "title": r["title"],
                "link": r["url"],
                "description": r["snippet"],
            }
            for r in results
        ]
    else:
        body["organic_results"] = [
            {
                "position": r["position"],
                "title": r["title"],
                "link": r["url"],
                "displayed_link": r["domain"],
                "snippet": r["snippet"],
                "date": r["date"],
            }
            for r in results
        ]
        body["related_questions"] = [
            {"question": f"What is {query}?"},
            {"question": f"How does {query} work?"},
        ]
    if page.has_more:
        body["serpapi_pagination"] = {
            "current": page.number,
            "next": f"https://serpapi.com/search.json?engine={engine}&q={slugify(query)}&start={page.next_offset}",
        }
    return body


def _serpapi_metadata(job_hex: str, status: str) -> dict:
    return {
        "id": job_hex,
        "status": status,
        "json_endpoint": f"https://serpapi.com/searches/{job_hex}.json",
        "created_at": "2025-12-01 10:00:00 UTC",
        "processed_at": "2025-12-01 10:00:01 UTC",
        "google_url": "https://www.google.com/search",
        "total_time_taken": 1.21,
    }


@handles("serpapi", "GET", "/search")
def serpapi_search(call: Call):
    job = job_new("serpapi_search", seed=call.seed, inputs=dict(call.inputs))
    if call.get("async"):
        return {
            "search_metadata": _serpapi_metadata(job.hex, "Processing"),
            "search_parameters": {"engine": call.text("engine", "google"), "q": call.text("q")},
        }
    return {"search_metadata": _serpapi_metadata(job.hex, "Success"), **_serpapi_results(call)}


@handles("serpapi", "GET", "/searches/{search_id}.json")
def serpapi_archive(call: Call):
    job, done = job_for(call, "search_id")
    if not done:
        return {"search_metadata": _serpapi_metadata(call.text("search_id"), "Processing")}
    # The archived search is the original search answered again from its stored inputs.
    inputs = (job_inputs(job) if job else None) or {"q": "sandbox"}
    search = call.api.match("GET", "/search")[0]
    original = Call(
        api=call.api, op=search, path="/search", inputs=inputs, body=None, request=call.request
    )
    return {
        "search_metadata": _serpapi_metadata(call.text("search_id"), "Success"),
        **_serpapi_results(original),
    }


@handles("serpapi", "GET", "/locations.json")
def serpapi_locations(call: Call):
    query = call.text("q").lower()
    limit = int(call.get("limit") or 10)
    matches = [c for c in CITIES if query in c[0].lower()] or list(CITIES)
    return [
        {
            "id": f"{1000000 + n}",
            "name": city,
            "canonical_name": f"{city},{region},{country}",
            "country_code": code,
            "target_type": "City",
            "reach": 1_000_000 - n * 1000,
        }
        for n, (city, region, country, code, _) in enumerate(matches[:limit])
    ]


@handles("serpapi", "GET", "/account")
def serpapi_account(call: Call):
    return {
        "account_id": "sandbox",
        "api_key": "sandbox",
        "account_email": "sandbox@example.com",
        "plan_id": "developer",
        "plan_name": "Developer",
        "searches_per_month": 5000,
        "plan_searches_left": 4731,
        "extra_credits": 0,
        "total_searches_left": 4731,
        "this_month_usage": 269,
        "last_hour_searches": 3,
        "account_rate_limit_per_hour": 1000,
    }


# --- Serper ----------------------------------------------------------------------------------


def _serper_params(call: Call, kind: str) -> dict:
    params = {"q": call.text("q"), "type": kind, "engine": "google"}
    for name in ("gl", "hl", "num", "page", "location"):
        if call.get(name) is not None:
            params[name] = call.get(name)
    return params


def _serper_list(call: Call, kind: str, key: str, make, default_size: int = 10):
    _page, items = listing(call, make, default_size=default_size)
    return {"searchParameters": _serper_params(call, kind), key: items, "credits": 1}


@handles("serper", "POST", "/search")
def serper_search(call: Call):
    query = call.text("q")

    def make(rng, index):
        r = search_result(rng, query, index)
        return {
            "title": r["title"],
            "link": r["url"],
            "snippet": r["snippet"],
            "date": r["date"],
            "position": r["position"],
        }

    body = _serper_list(call, "search", "organic", make)
    rng = call.rng("extras")
    body["knowledgeGraph"] = {
        "title": title_case(query),
        "type": "Topic",
        "description": sentence(rng, query),
    }
    body["peopleAlsoAsk"] = [
        {
            "question": f"What is {query}?",
            "snippet": sentence(rng, query),
            "link": f"https://en.wikipedia.org/wiki/{slugify(query)}",
        }
    ]
    body["relatedSearches"] = [
        {"query": f"{query} {suffix}"} for suffix in ("tutorial", "examples", "pricing")
    ]
    return body


@handles("serper", "POST", "/news")
def serper_news(call: Call):
    query = call.text("q")

    def make(rng, index):
        r = search_result(rng, query, index)
        return {
            "title": r["title"],
            "link": r["url"],
            "snippet": r["snippet"],
            "date": f"{index + 1} hours ago",
            "source": rng.choice(("Reuters", "BBC", "TechCrunch", "The Verge")),
            "imageUrl": f"https://news.example.com/{slugify(query)}-{index}.jpg",
            "position": index + 1,
        }

    return _serper_list(call, "news", "news", make)


@handles("serper", "POST", "/images")
def serper_images(call: Call):
    query = call.text("q")
    count = int(call.get("num") or 10)
    images = []
    for index in range(count):
        rng = call.rng(index)
        r = search_result(rng, query, index)
        images.append(
            {
                "title": r["title"],
                "imageUrl": f"https://{r['domain']}/images/{slugify(query)}-{index}.jpg",
                "imageWidth": 1200,
                "imageHeight": 800,
                "thumbnailUrl": f"https://encrypted-tbn0.gstatic.com/images?q={slugify(query)}-{index}",
                "source": r["domain"],
                "domain": r["domain"],
                "link": r["url"],
                "position": index + 1,
            }
        )
    return {"searchParameters": _serper_params(call, "images"), "images": images, "credits": 1}


def _place(rng, index: int, query: str) -> dict:
    org = company(
        rng,
        name=f"{title_case(query.split(' in ')[0])} {rng.choice(PLACE_KINDS)}",
    )
    return {
        "position": index + 1,
        "title": org["name"],
        "address": f"{org['street']}, {org['city']}",
        "latitude": round(rng.uniform(-60, 60), 6),
        "longitude": round(rng.uniform(-120, 120), 6),
        "rating": round(rng.uniform(3.1, 5.0), 1),
        "ratingCount": rng.randint(3, 4000),
        "category": org["industry"].title(),
        "phoneNumber": org["phone"],
        "website": org["website"],
        "cid": str(rng.getrandbits(63)),
    }


@handles("serper", "POST", "/places")
def serper_places(call: Call):
    query = call.text("q")
    return _serper_list(call, "places", "places", lambda rng, index: _place(rng, index, query))


@handles("serper", "POST", "/maps")
def serper_maps(call: Call):
    query = call.text("q", "coffee")

    def make(rng, index):
        place = _place(rng, index, query)
        place.update(
            placeId=f"ChIJ{rng.getrandbits(64):016x}",
            openingHours={"Monday": "9 AM-6 PM"},
            type=place["category"],
        )
        return place

    if call.text("placeId"):
        return {
            "searchParameters": _serper_params(call, "maps"),
            "places": [make(call.rng(), 0)],
            "credits": 3,
        }
    return _serper_list(call, "maps", "places", make, default_size=20)


@handles("serper", "POST", "/shopping")
def serper_shopping(call: Call):
    query = call.text("q")
    count = int(call.get("num") or 10)
    items = []
    for index in range(count):
        rng = call.rng(index)
        price = round(rng.uniform(9, 600), 2)
        items.append(
            {
                "title": f"{title_case(query)} {rng.choice(('Pro', 'Lite', 'Max'))}",
                "source": rng.choice(("Amazon.com", "Best Buy", "Walmart")),
                "link": f"https://shop.example.com/{slugify(query)}-{index}",
                "price": f"${price:,.2f}",
                "delivery": "Free delivery",
                "imageUrl": f"https://shop.example.com/{slugify(query)}-{index}.jpg",
                "rating": round(rng.uniform(3.5, 4.9), 1),
                "ratingCount": rng.randint(3, 9000),
                "productId": str(rng.getrandbits(50)),
                "position": index + 1,
            }
        )
    return {"searchParameters": _serper_params(call, "shopping"), "shopping": items, "credits": 2}


@handles("serper", "POST", "/scholar")
def serper_scholar(call: Call):
    query = call.text("q")

    def make(rng, index):
        r = search_result(rng, query, index)
        year = rng.randint(2015, 2025)
        author = rng.choice(("A Smith", "L Chen", "M Garcia"))
        return {
            "title": title_case(sentence(rng, query, 8).rstrip(".")),
            "link": f"https://arxiv.org/abs/24{rng.randint(1, 12):02d}.{rng.randint(10000, 99999)}",
            "publicationInfo": f"{author} - arXiv preprint, {year}",
            "snippet": r["snippet"],
            "year": year,
            "citedBy": rng.randint(0, 3000),
            "pdfUrl": f"https://arxiv.org/pdf/{index}.pdf",
            "id": f"{rng.getrandbits(48):012x}",
        }

    return _serper_list(call, "scholar", "organic", make)


@handles("serper", "POST", "/autocomplete")
def serper_autocomplete(call: Call):
    query = call.text("q")
    suffixes = ("", " meaning", " near me", " tutorial", " vs", " price", " review", " login")
    return {
        "searchParameters": _serper_params(call, "autocomplete"),
        "suggestions": [{"value": f"{query}{suffix}".strip()} for suffix in suffixes],
        "credits": 1,
    }


# --- Tavily ----------------------------------------------------------------------------------


@handles("tavily", "POST", "/search")
def tavily_search(call: Call):
    query = call.text("query")
    count = int(call.get("max_results") if call.get("max_results") is not None else 5)
    rng = call.rng()
    results = []
    for index in range(count):
        item_rng = call.rng(index)
        r = search_result(item_rng, query, index)
        result = {
            "title": r["title"],
            "url": r["url"],
            "content": r["snippet"],
            "score": r["score"],
            "raw_content": web_page(item_rng, r["url"])["markdown"]
            if call.get("include_raw_content")
            else None,
        }
        if call.text("topic") == "news":
            result["published_date"] = r["date"]
        results.append(result)
    return {
        "query": query,
        "follow_up_questions": None,
        "answer": f"{title_case(query)}: {sentence(rng, query)}"
        if call.get("include_answer")
        else None,
        "images": [f"https://images.example.com/{slugify(query)}-{n}.jpg" for n in range(3)]
        if call.get("include_images")
        else [],
        "results": results,
        "response_time": 1.07,
    }


@handles("tavily", "POST", "/extract")
def tavily_extract(call: Call):
    results = []
    for index, url in enumerate(call.body["urls"]):
        page = web_page(call.rng(index), str(url))
        results.append(
            {
                "url": page["url"],
                "raw_content": page["markdown"]
                if call.text("format", "markdown") == "markdown"
                else page["text"],
                "images": [],
            }
        )
    return {"results": results, "failed_results": [], "response_time": 0.62}


@handles("tavily", "POST", "/crawl")
def tavily_crawl(call: Call):
    url = call.text("url")
    limit = int(call.get("limit") or 50)
    urls = site_urls(call.rng("site"), url, min(limit, 5 + call.seed % 30))
    results = [
        {
            "url": link,
            "raw_content": web_page(call.rng(n), link, call.text("instructions"))["markdown"],
        }
        for n, link in enumerate(urls)
    ]
    return {"base_url": url, "results": results, "response_time": 2.4}


@handles("tavily", "POST", "/map")
def tavily_map(call: Call):
    url = call.text("url")
    limit = int(call.get("limit") or 50)
    return {
        "base_url": url,
        "results": site_urls(call.rng(), url, min(limit, 10 + call.seed % 60)),
        "response_time": 0.9,
    }


@handles("tavily", "GET", "/usage")
def tavily_usage(call: Call):
    return {
        "key": {"usage": 150, "limit": 1000},
        "account": {
            "current_plan": "Researcher",
            "plan_usage": 150,
            "plan_limit": 1000,
            "paygo_usage": 0,
            "paygo_limit": None,
        },
    }
