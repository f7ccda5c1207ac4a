"""People-email APIs: Hunter, ContactOut, Dropcontact, Findymail, Prospeo, Snov.io."""

import random

from sandbox.call import Call, stable_hash
from sandbox.generators.emails import verdict
from sandbox.generators.people import company, person, short_id
from sandbox.generators.words import clean_domain
from sandbox.handlers.common import job_for, listing
from sandbox.handlers.registry import handles
from sandbox.jobs import job_inputs, job_new

# --- Hunter ----------------------------------------------------------------------------------


def _hunter_domain(call: Call) -> str:
    if call.text("domain"):
        return clean_domain(call.text("domain"))
    return company(call.rng(), name=call.text("company") or "Example").get("domain")


def hunter_email(p: dict, rng) -> dict:
    return {
        "value": p["email"],
        "type": "personal",
        "confidence": p["confidence"],
        "first_name": p["first_name"],
        "last_name": p["last_name"],
        "position": p["title"],
        "seniority": {"c_suite": "executive", "vp": "executive"}.get(p["seniority"], "senior"),
        "department": p["department"],
        "linkedin": p["linkedin_url"],
        "twitter": None,
        "phone_number": None,
        "verification": {"date": "2025-06-01", "status": verdict(p["email"]).status},
        "sources": [
            {
                "domain": p["company"]["domain"],
                "uri": f"https://{p['company']['domain']}/about",
                "extracted_on": "2025-03-14",
                "last_seen_on": "2025-09-02",
                "still_on_page": rng.random() < 0.9,
            }
        ],
    }


@handles("hunter", "GET", "/v2/domain-search")
def hunter_domain_search(call: Call):
    domain = _hunter_domain(call)
    org = company(call.rng("org"), domain=domain)
    page, emails = listing(call, lambda rng, index: hunter_email(person(rng, domain=domain), rng))
    return {
        "data": {
            "domain": domain,
            "disposable": False,
            "webmail": False,
            "accept_all": call.seed % 5 == 0,
            "pattern": "{first}.{last}",
            "organization": org["name"],
            "description": org["description"],
            "industry": org["industry"],
            "twitter": org["twitter_url"],
            "linkedin": org["linkedin_url"],
            "country": org["country_code"],
            "emails": emails,
            "linked_domains": [],
        },
        "meta": {
            "results": page.total,
            "limit": page.size,
            "offset": page.offset,
            "params": {
                "domain": domain,
                "company": call.get("company"),
                "type": call.get("type"),
                "seniority": call.get("seniority"),
                "department": call.get("department"),
            },
        },
    }


@handles("hunter", "GET", "/v2/email-finder")
def hunter_email_finder(call: Call):
    domain = _hunter_domain(call)
    rng = call.rng()
    p = person(
        rng,
        first=call.text("first_name") or None,
        last=call.text("last_name") or None,
        full_name=call.text("full_name") or None,
        domain=domain,
    )
    return {
        "data": {
            "first_name": p["first_name"],
            "last_name": p["last_name"],
            "email": p["email"],
            "score": p["confidence"],
            "domain": domain,
            "accept_all": False,
            "position": p["title"],
            "twitter": None,
            "linkedin_url": p["linkedin_url"],
            "phone_number": None,
            "company": p["company"]["name"],
            "sources": hunter_email(p, rng)["sources"],
            "verification": {"date": "2025-06-01", "status": verdict(p["email"]).status},
        },
        "meta": {
            "params": {"first_name": p["first_name"], "last_name": p["last_name"], "domain": domain}
        },
    }


@handles("hunter", "GET", "/v2/email-verifier")
def hunter_email_verifier(call: Call):
    result = verdict(call.text("email"))
    status = {"catch_all": "accept_all", "valid": "webmail" if result.free else "valid"}.get(
        result.status, result.status
    )
    return {
        "data": {
            "status": status,
            "result": {"valid": "deliverable", "invalid": "undeliverable"}.get(
                result.status, "risky"
            ),
            "score": result.score,
            "email": result.email,
            "regexp": result.syntax_ok,
            "gibberish": False,
            "disposable": result.disposable,
            "webmail": result.free,
            "mx_records": result.mx_found,
            "smtp_server": result.mx_found,
            "smtp_check": result.status == "valid",
            "accept_all": result.status == "catch_all",
            "block": False,
            "sources": [],
        },
        "meta": {"params": {"email": result.email}},
    }


@handles("hunter", "GET", "/v2/email-count")
def hunter_email_count(call: Call):
    rng = call.rng()
    personal, generic = rng.randint(20, 400), rng.randint(1, 30)
    return {
        "data": {
            "total": personal + generic,
            "personal_emails": personal,
            "generic_emails": generic,
            "department": {
                name: rng.randint(0, personal // 4)
                for name in ("executive", "it", "finance", "management", "sales", "marketing")
            },
            "seniority": {
                name: rng.randint(0, personal // 3) for name in ("junior", "senior", "executive")
            },
        },
        "meta": {"params": {"domain": call.get("domain"), "company": call.get("company")}},
    }


def hunter_company(org: dict) -> dict:
    return {
        "id": org["id"],
        "name": org["name"],
        "legalName": org["legal_name"],
        "domain": org["domain"],
        "description": org["description"],
        "foundedYear": org["founded_year"],
        "category": {"industry": org["industry"]},
        "tags": org["keywords"],
        "geo": {
            "city": org["city"],
            "state": org["region"],
            "country": org["country"],
            "countryCode": org["country_code"],
        },
        "linkedin": {"handle": org["linkedin_url"].rsplit("/", 1)[-1]},
        "twitter": {"handle": org["twitter_url"].rsplit("/", 1)[-1]},
        "metrics": {"employees": org["employee_range"], "raised": org["funding_total"]},
        "tech": org["technologies"],
        "phone": org["phone"],
    }


def hunter_person(p: dict) -> dict:
    return {
        "id": p["id"],
        "name": {
            "fullName": p["full_name"],
            "givenName": p["first_name"],
            "familyName": p["last_name"],
        },
        "email": p["email"],
        "location": p["location"],
        "geo": {"city": p["city"], "state": p["region"], "country": p["country"]},
        "employment": {
            "domain": p["company"]["domain"],
            "name": p["company"]["name"],
            "title": p["title"],
            "role": p["department"],
            "seniority": p["seniority"],
        },
        "linkedin": {"handle": p["linkedin_username"]},
        "twitter": {"handle": None},
    }


@handles("hunter", "GET", "/v2/companies/find")
def hunter_company_find(call: Call):
    return {
        "data": hunter_company(company(call.rng(), domain=call.text("domain"))),
        "meta": {"domain": call.text("domain")},
    }


@handles("hunter", "GET", "/v2/people/find")
def hunter_people_find(call: Call):
    p = person(call.rng(), email=call.text("email") or None)
    return {"data": hunter_person(p), "meta": {"email": p["email"]}}


@handles("hunter", "GET", "/v2/combined/find")
def hunter_combined(call: Call):
    p = person(call.rng(), email=call.text("email"))
    return {
        "data": {"person": hunter_person(p), "company": hunter_company(p["company"])},
        "meta": {"email": p["email"]},
    }


@handles("hunter", "POST", "/v2/discover")
def hunter_discover(call: Call):
    def make(rng, index):
        org = company(rng)
        return {
            "domain": org["domain"],
            "organization": org["name"],
            "emails_count": {
                "personal": rng.randint(5, 300),
                "generic": rng.randint(0, 20),
                "total": 0,
            },
        }

    page, data = listing(call, make, default_size=100)
    for item in data:
        item["emails_count"]["total"] = (
            item["emails_count"]["personal"] + item["emails_count"]["generic"]
        )
    return {
        "data": data,
        "meta": {
            "results": page.total,
            "limit": page.size,
            "offset": page.offset,
            "params": {},
            "filters": {},
        },
    }


@handles("hunter", "GET", "/v2/account")
def hunter_account(call: Call):
    return {
        "data": {
            "first_name": "Sandbox",
            "last_name": "User",
            "email": "sandbox@example.com",
            "plan_name": "Growth",
            "plan_level": 2,
            "reset_date": "2026-01-01",
            "team_id": 31337,
            "calls": {
                "_deprecation_notice": "Sums the searches and the verifications",
                "used": 312,
                "available": 10000,
            },
            "requests": {
                "searches": {"used": 212, "available": 5000},
                "verifications": {"used": 100, "available": 10000},
            },
        }
    }


# --- ContactOut ------------------------------------------------------------------------------


def contactout_profile(p: dict) -> dict:
    return {
        "url": p["linkedin_url"],
        "email": [p["email"], p["personal_email"]],
        "work_email": [p["email"]],
        "personal_email": [p["personal_email"]],
        "phone": [p["mobile_phone"]],
        "full_name": p["full_name"],
        "headline": p["headline"],
        "company": {
            "name": p["company"]["name"],
            "url": p["company"]["linkedin_url"],
            "domain": p["company"]["domain"],
        },
        "location": p["location"],
        "title": p["title"],
        "skills": p["skills"],
        "experience": [
            {
                "company_name": p["company"]["name"],
                "title": p["title"],
                "start_date": p["job_start"],
                "is_current": True,
            },
            {
                "company_name": p["previous_company"]["name"],
                "title": p["previous_title"],
                "start_date": p["previous_start"],
                "is_current": False,
            },
        ],
        "education": [{"school_name": p["school"]}],
    }


@handles("contactout", "GET", "/v1/people/linkedin")
def contactout_linkedin(call: Call):
    p = person(call.rng(), linkedin_url=call.text("profile"))
    email_type = call.text("email_type", "personal,work")
    profile = {"url": p["linkedin_url"], "email": [], "work_email": [], "personal_email": []}
    if "work" in email_type:
        profile["work_email"] = [p["email"]]
        profile["email"].append(p["email"])
    if "personal" in email_type:
        profile["personal_email"] = [p["personal_email"]]
        profile["email"].append(p["personal_email"])
    if call.get("include_phone"):
        profile["phone"] = [p["mobile_phone"]]
    return {"status_code": 200, "profile": profile}


@handles("contactout", "GET", "/v1/linkedin/enrich")
def contactout_linkedin_enrich(call: Call):
    return {
        "status_code": 200,
        "profile": contactout_profile(person(call.rng(), linkedin_url=call.text("profile"))),
    }


@handles("contactout", "POST", "/v1/people/enrich")
def contactout_people_enrich(call: Call):
    companies = call.get("company") or []
    p = person(
        call.rng(),
        full_name=call.text("full_name") or None,
        company_name=companies[0] if companies else None,
        title=call.text("job_title") or None,
        email=call.text("email") or None,
        linkedin_url=call.text("linkedin_url") or None,
    )
    return {"status_code": 200, "profile": contactout_profile(p)}


@handles("contactout", "POST", "/v1/people/search")
def contactout_people_search(call: Call):
    reveal = bool(call.get("reveal_info"))

    def make(rng, index):
        p = contactout_profile(person(rng))
        if not reveal:
            p.update(email=[], work_email=[], personal_email=[], phone=[])
        p["contact_availability"] = {
            "work_email": True,
            "personal_email": True,
            "phone": rng.random() < 0.6,
        }
        return p

    page, profiles = listing(call, make, size=25)
    return {
        "status_code": 200,
        "metadata": {"page": page.number, "page_size": 25, "total_results": page.total},
        "profiles": {p["url"]: p for p in profiles},
    }


@handles("contactout", "GET", "/v1/email/enrich")
def contactout_email_enrich(call: Call):
    return {
        "status_code": 200,
        "profile": contactout_profile(person(call.rng(), email=call.text("email"))),
    }


@handles("contactout", "POST", "/v1/domain/enrich")
def contactout_domain_enrich(call: Call):
    companies = {}
    for index, domain in enumerate(call.body["domains"]):
        org = company(call.rng(index), domain=domain)
        companies[org["domain"]] = {
            "name": org["name"],
            "domain": org["domain"],
            "li_vanity": org["linkedin_url"].rsplit("/", 1)[-1],
            "size": org["employees"],
            "industry": org["industry"],
            "headquarter": f"{org['city']}, {org['country']}",
            "website": org["website"],
            "founded_at": org["founded_year"],
        }
    return {"status_code": 200, "companies": companies}


@handles("contactout", "POST", "/v2/people/linkedin/batch")
def contactout_batch(call: Call):
    profiles = call.body["profiles"]
    job = job_new("contactout_batch", seed=call.seed, count=len(profiles), inputs=profiles)
    return {"status": "QUEUED", "job_id": job.uuid}


@handles("contactout", "GET", "/v2/people/linkedin/batch/{job_id}")
def contactout_batch_status(call: Call):
    job, done = job_for(call, "job_id")
    if not done:
        return {"data": {"uuid": call.text("job_id"), "status": "SENT", "result": {}}}
    seed = job.seed if job else call.seed
    urls = (job_inputs(job) if job else None) or [
        person(call.rng(index))["linkedin_url"] for index in range(job.count if job else 3)
    ]
    result = {}
    for index, url in enumerate(urls):
        p = person(call.item_rng(index, seed), linkedin_url=url)
        result[url] = {"emails": [p["email"], p["personal_email"]], "phones": [p["mobile_phone"]]}
    return {"data": {"uuid": call.text("job_id"), "status": "DONE", "result": result}}


@handles("contactout", "GET", "/v1/stats")
def contactout_stats(call: Call):
    return {
        "status_code": 200,
        "period": {"start": "2025-12-01", "end": "2025-12-31"},
        "usage": {
            "count": 512,
            "quota": 2000,
            "remaining": 1488,
            "phone_count": 40,
            "phone_quota": 250,
            "search_count": 90,
            "search_quota": 1000,
        },
    }


# --- Dropcontact -----------------------------------------------------------------------------


def _dropcontact_contact(rng, contact: dict) -> dict:
    p = person(
        rng,
        first=contact.get("first_name"),
        last=contact.get("last_name"),
        full_name=contact.get("full_name"),
        company_name=contact.get("company"),
        domain=contact.get("website"),
        email=contact.get("email"),
        linkedin_url=contact.get("linkedin"),
    )
    return {
        "civility": "",
        "first_name": p["first_name"],
        "last_name": p["last_name"],
        "full_name": p["full_name"],
        "email": [{"email": p["email"], "qualification": "nominative@pro"}],
        "phone": p["phone"],
        "mobile_phone": p["mobile_phone"],
        "company": p["company"]["name"],
        "website": p["company"]["website"],
        "linkedin": p["linkedin_url"],
        "company_linkedin": p["company"]["linkedin_url"],
        "job": p["title"],
        "country": p["country"],
        "nb_employees": p["company"]["employee_range"],
        **{k: v for k, v in contact.items() if k == "custom_fields"},
    }


@handles("dropcontact", "POST", "/v1/enrich/all")
def dropcontact_submit(call: Call):
    data = call.body["data"]
    job = job_new("dropcontact_enrich", seed=call.seed, count=len(data), inputs=data)
    return {
        "error": False,
        "request_id": job.hex,
        "success": True,
        "credits_left": 4800 - len(data),
    }


@handles("dropcontact", "GET", "/v1/enrich/all/{request_id}")
def dropcontact_result(call: Call):
    job, done = job_for(call, "request_id")
    if not done and not call.get("forceResults"):
        return {
            "error": False,
            "reason": "Request not ready yet, try again in 30 seconds",
            "success": False,
        }
    contacts = (job_inputs(job) if job else None) or [{} for _ in range(job.count if job else 1)]
    seed = job.seed if job else call.seed
    return {
        "data": [
            _dropcontact_contact(
                call.item_rng(index, seed), contact if isinstance(contact, dict) else {}
            )
            for index, contact in enumerate(contacts)
        ],
        "error": False,
        "success": True,
    }


@handles("dropcontact", "GET", "/v1/account/credits")
def dropcontact_credits(call: Call):
    return {"credits": 4800, "error": False, "success": True}


# --- Findymail -------------------------------------------------------------------------------


def _findymail_contact(p: dict) -> dict:
    return {
        "name": p["full_name"],
        "email": p["email"],
        "domain": p["company"]["domain"],
        "linkedin_url": p["linkedin_url"],
        "job_title": p["title"],
        "company": p["company"]["name"],
    }


@handles("findymail", "POST", "/api/search/name")
def findymail_name(call: Call):
    domain = call.text("domain")
    p = person(
        call.rng(),
        full_name=call.text("name"),
        domain=domain if "." in domain else None,
        company_name=None if "." in domain else domain,
    )
    return {"contact": _findymail_contact(p)}


@handles("findymail", "POST", "/api/search/linkedin")
def findymail_linkedin(call: Call):
    return {
        "contact": _findymail_contact(person(call.rng(), linkedin_url=call.text("linkedin_url")))
    }


@handles("findymail", "POST", "/api/search/domain")
def findymail_domain(call: Call):
    roles = call.body["roles"]
    contacts = [
        _findymail_contact(person(call.rng(index), domain=call.text("domain"), title=role))
        for index, role in enumerate(roles)
    ]
    return {"contacts": contacts}


@handles("findymail", "POST", "/api/search/phone")
def findymail_phone(call: Call):
    p = person(call.rng(), linkedin_url=call.text("linkedin_url"))
    return {"phone": p["mobile_phone"], "linkedin_url": p["linkedin_url"]}


@handles("findymail", "POST", "/api/verify")
def findymail_verify(call: Call):
    result = verdict(call.text("email"))
    return {
        "email": result.email,
        "verified": result.status == "valid",
        "provider": result.smtp_provider,
    }


@handles("findymail", "GET", "/api/credits")
def findymail_credits(call: Call):
    return {"credits": 1850, "verifier_credits": 4200}


# --- Prospeo ---------------------------------------------------------------------------------


def prospeo_person(p: dict, mobile: bool = False) -> dict:
    return {
        "person_id": short_id("prospeo", p["id"], length=20),
        "first_name": p["first_name"],
        "last_name": p["last_name"],
        "full_name": p["full_name"],
        "linkedin_url": p["linkedin_url"],
        "current_job_title": p["title"],
        "headline": p["headline"],
        "location": {
            "city": p["city"],
            "state": p["region"],
            "country": p["country"],
            "country_code": p["country_code"],
        },
        "email": {"status": "VERIFIED", "revealed": True, "email": p["email"]},
        "mobile": {
            "status": "VERIFIED",
            "revealed": mobile,
            "mobile": p["mobile_phone"] if mobile else None,
        },
        "job_history": [
            {
                "title": p["title"],
                "company_name": p["company"]["name"],
                "current": True,
                "start_year": int(p["job_start"][:4]),
            }
        ],
    }


def prospeo_company(org: dict) -> dict:
    return {
        "company_id": short_id("prospeo-company", org["domain"], length=20),
        "name": org["name"],
        "website": org["website"],
        "domain": org["domain"],
        "description": org["description"],
        "industry": org["industry"],
        "employee_count": org["employees"],
        "employee_range": org["employee_range"],
        "founded": org["founded_year"],
        "location": {"city": org["city"], "country": org["country"]},
        "linkedin_url": org["linkedin_url"],
        "revenue_range": {"min": org["annual_revenue"] // 2, "max": org["annual_revenue"]},
        "technologies": org["technologies"],
    }


def _prospeo_input(rng, data: dict) -> dict:
    return person(
        rng,
        first=data.get("first_name"),
        last=data.get("last_name"),
        full_name=data.get("full_name"),
        email=data.get("email"),
        linkedin_url=data.get("linkedin_url"),
        company_name=data.get("company_name"),
        domain=data.get("company_website"),
    )


@handles("prospeo", "POST", "/enrich-person")
def prospeo_enrich(call: Call):
    data = call.body["data"] if isinstance(call.body["data"], dict) else {}
    p = _prospeo_input(call.rng(), data)
    return {
        "error": False,
        "free_enrichment": False,
        "person": prospeo_person(p, bool(call.get("enrich_mobile"))),
        "company": prospeo_company(p["company"]),
    }


@handles("prospeo", "POST", "/bulk-enrich-person")
def prospeo_bulk(call: Call):
    matched = []
    for index, item in enumerate(call.body["data"]):
        item = item if isinstance(item, dict) else {}
        p = _prospeo_input(call.rng(index), item)
        matched.append(
            {
                "identifier": item.get("identifier", str(index + 1)),
                "person": prospeo_person(p, bool(call.get("enrich_mobile"))),
                "company": prospeo_company(p["company"]),
            }
        )
    return {
        "error": False,
        "total_cost": len(matched),
        "matched": matched,
        "not_matched": [],
        "invalid_datapoints": [],
    }


def _prospeo_search(call: Call, make, key: str):
    page, results = listing(call, make, size=25)
    return {
        "error": False,
        key: results,
        "pagination": {
            "current_page": page.number,
            "per_page": 25,
            "total_page": -(-page.total // 25),
            "total_count": page.total,
        },
    }


@handles("prospeo", "POST", "/search-person")
def prospeo_search_person(call: Call):
    def make(rng, index):
        p = person(rng)
        entry = prospeo_person(p)
        entry["email"] = {"status": "VERIFIED", "revealed": False, "email": None}
        return {"person": entry, "company": prospeo_company(p["company"])}

    return _prospeo_search(call, make, "results")


@handles("prospeo", "POST", "/enrich-company")
def prospeo_enrich_company(call: Call):
    data = call.body["data"] if isinstance(call.body["data"], dict) else {}
    org = company(call.rng(), domain=data.get("company_website"), name=data.get("company_name"))
    return {"error": False, "free_enrichment": False, "company": prospeo_company(org)}


@handles("prospeo", "POST", "/search-company")
def prospeo_search_company(call: Call):
    return _prospeo_search(
        call, lambda rng, index: {"company": prospeo_company(company(rng))}, "results"
    )


@handles("prospeo", "GET", "/account-information")
def prospeo_account(call: Call):
    return {
        "error": False,
        "response": {
            "current_plan": "STARTER",
            "remaining_credits": 812,
            "used_credits": 188,
            "next_quota_renewal_days": 17,
            "next_quota_renewal_date": "2026-01-01 00:00:00+00:00",
        },
    }


# --- Snov.io ---------------------------------------------------------------------------------


def _snov_started(call: Call, kind: str, path: str, count: int = 0, inputs=None) -> dict:
    job = job_new(kind, seed=call.seed, count=count, inputs=inputs)
    return {
        "data": {"task_hash": job.hex},
        "meta": {"domain": call.get("domain")} if call.get("domain") else {},
        "links": {"result": f"https://api.snov.io{path.format(task_hash=job.hex)}"},
    }


def _snov_result(call: Call, name: str = "task_hash"):
    job, done = job_for(call, name)
    if not done:
        return job, None
    return job, _job_rng(call, job, 0)


def _job_rng(call: Call, job, index: int, *salt) -> random.Random:
    """Result ``index`` of a job, from the job's own seed: the job id also carries its start
    time, so identical starts at different moments must still give identical results."""
    if job is None:
        return call.item_rng(index, *salt)
    return random.Random(stable_hash(job.seed, index, *salt))


@handles("snov", "POST", "/v2/domain-search/start")
def snov_domain_start(call: Call):
    domain = clean_domain(call.text("domain"))
    return _snov_started(call, "snov_domain", "/v2/domain-search/result/{task_hash}", inputs=domain)


@handles("snov", "GET", "/v2/domain-search/result/{task_hash}")
def snov_domain_result(call: Call):
    job, rng = _snov_result(call)
    if rng is None:
        return {"status": "in_progress", "data": [], "meta": {"task_hash": call.text("task_hash")}}
    domain = (job_inputs(job) if job else None) or "example.com"
    org = company(rng, domain=domain)
    return {
        "data": {
            "company_name": org["name"],
            "city": org["city"],
            "founded": org["founded_year"],
            "websites": [org["website"]],
            "industry": org["industry"],
            "size": org["employee_range"],
            "hq_phone": org["phone"],
        },
        "meta": {
            "domain": domain,
            "emails_count": 40 + org["employees"] % 300,
            "prospects_count": 60 + org["employees"] % 500,
            "task_hash": call.text("task_hash"),
        },
        "status": "completed",
    }


@handles("snov", "POST", "/v2/domain-search/prospects/start")
def snov_prospects_start(call: Call):
    inputs = {
        "domain": clean_domain(call.text("domain")),
        "page": int(call.get("page") or 1),
        "positions": call.get("positions") or [],
    }
    return _snov_started(
        call, "snov_prospects", "/v2/domain-search/prospects/result/{task_hash}", inputs=inputs
    )


@handles("snov", "GET", "/v2/domain-search/prospects/result/{task_hash}")
def snov_prospects_result(call: Call):
    job, rng = _snov_result(call)
    if rng is None:
        return {"status": "in_progress", "data": [], "meta": {"task_hash": call.text("task_hash")}}
    inputs = (job_inputs(job) if job else None) or {
        "domain": "example.com",
        "page": 1,
        "positions": [],
    }
    positions = inputs["positions"]
    total = 60 + (job.seed if job else call.seed) % 200
    start = (inputs["page"] - 1) * 20
    prospects = []
    for index in range(start, min(start + 20, total)):
        p = person(
            _job_rng(call, job, index, inputs["domain"]),
            domain=inputs["domain"],
            title=positions[index % len(positions)] if positions else None,
        )
        prospects.append(
            {
                "first_name": p["first_name"],
                "last_name": p["last_name"],
                "position": p["title"],
                "source_page": p["linkedin_url"],
                "search_emails_start": "https://api.snov.io/v2/li-profiles-by-urls/start",
            }
        )
    return {
        "data": prospects,
        "meta": {
            "domain": inputs["domain"],
            "page": inputs["page"],
            "total_count": total,
            "task_hash": call.text("task_hash"),
        },
        "status": "completed",
    }


@handles("snov", "POST", "/v2/domain-search/domain-emails/start")
def snov_domain_emails_start(call: Call):
    inputs = {"domain": clean_domain(call.text("domain")), "limit": int(call.get("limit") or 10)}
    return _snov_started(
        call,
        "snov_domain_emails",
        "/v2/domain-search/domain-emails/result/{task_hash}",
        inputs=inputs,
    )


@handles("snov", "GET", "/v2/domain-search/domain-emails/result/{task_hash}")
def snov_domain_emails_result(call: Call):
    job, rng = _snov_result(call)
    if rng is None:
        return {"status": "in_progress", "data": [], "meta": {"task_hash": call.text("task_hash")}}
    inputs = (job_inputs(job) if job else None) or {"domain": "example.com", "limit": 10}
    emails = [
        {
            "email": person(_job_rng(call, job, index, inputs["domain"]), domain=inputs["domain"])[
                "email"
            ],
            "type": "personal",
            "status": "verified",
        }
        for index in range(inputs["limit"])
    ]
    return {
        "data": emails,
        "meta": {
            "domain": inputs["domain"],
            "total_count": len(emails),
            "task_hash": call.text("task_hash"),
        },
        "status": "completed",
    }


@handles("snov", "POST", "/v2/emails-by-domain-by-name/start")
def snov_finder_start(call: Call):
    rows = call.body["rows"]
    return _snov_started(
        call,
        "snov_email_finder",
        "/v2/emails-by-domain-by-name/result?task_hash={task_hash}",
        count=len(rows),
        inputs=rows,
    )


@handles("snov", "GET", "/v2/emails-by-domain-by-name/result")
def snov_finder_result(call: Call):
    job, rng = _snov_result(call)
    if rng is None:
        return {"status": "in_progress", "data": [], "meta": {"task_hash": call.text("task_hash")}}
    rows = (job_inputs(job) if job else None) or [{} for _ in range(job.count if job else 1)]
    data = []
    for index, row in enumerate(rows):
        row = row if isinstance(row, dict) else {}
        p = person(
            call.item_rng(index, call.text("task_hash")),
            first=row.get("first_name"),
            last=row.get("last_name"),
            domain=row.get("domain"),
        )
        data.append(
            {
                "people": f"{p['first_name']} {p['last_name']}",
                "result": [
                    {
                        "email": p["email"],
                        "smtp_status": "valid"
                        if verdict(p["email"]).status == "valid"
                        else "unknown",
                        "is_valid_format": True,
                    }
                ],
            }
        )
    return {"status": "completed", "data": data, "meta": {"task_hash": call.text("task_hash")}}


@handles("snov", "POST", "/v2/email-verification/start")
def snov_verification_start(call: Call):
    emails = call.body["emails"]
    return _snov_started(
        call,
        "snov_verification",
        "/v2/email-verification/result?task_hash={task_hash}",
        count=len(emails),
        inputs=emails,
    )


@handles("snov", "GET", "/v2/email-verification/result")
def snov_verification_result(call: Call):
    job, rng = _snov_result(call)
    if rng is None:
        return {"status": "in_progress", "data": [], "meta": {"task_hash": call.text("task_hash")}}
    emails = (job_inputs(job) if job else None) or ["someone@example.com"]
    data = []
    for email in emails:
        result = verdict(str(email))
        status = {"valid": "valid", "invalid": "not_valid", "catch_all": "catch_all"}.get(
            result.status, "unknown"
        )
        data.append(
            {
                "email": result.email,
                "result": {
                    "is_webmail": result.free,
                    "smtp_status": status,
                    "is_gibberish": False,
                    "is_disposable": result.disposable,
                    "is_valid_format": result.syntax_ok,
                    "unknown_status_reason": "smtp_timeout" if status == "unknown" else None,
                },
            }
        )
    return {"status": "completed", "data": data, "meta": {"task_hash": call.text("task_hash")}}


@handles("snov", "POST", "/v1/get-domain-emails-count")
def snov_emails_count(call: Call):
    domain = clean_domain(call.text("domain"))
    return {
        "success": True,
        "domain": domain,
        "webmail": domain in ("gmail.com", "yahoo.com", "outlook.com"),
        "result": 40 + call.seed % 400,
    }


@handles("snov", "GET", "/v1/get-balance")
def snov_balance(call: Call):
    return {
        "success": True,
        "data": {
            "balance": "2450.00",
            "teamwork": False,
            "unique_recipients_used": 120,
            "limit_resets_in": 17,
            "expires_in": 300,
        },
    }
