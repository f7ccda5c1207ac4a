"""Lead-enrichment APIs: Apollo, People Data Labs, Lusha, RocketReach."""

from sandbox.call import Call
from sandbox.generators.people import company, person, short_id
from sandbox.generators.social import iso, timestamp
from sandbox.generators.words import INDUSTRIES, SKILLS, TITLES, sentence, title_case
from sandbox.handlers.common import first_text, listing
from sandbox.handlers.registry import handles
from sandbox.paging import page_for

# --- Apollo --------------------------------------------------------------------------------


def apollo_org(org: dict) -> dict:
    return {
        "id": org["id"],
        "name": org["name"],
        "website_url": org["website"],
        "primary_domain": org["domain"],
        "linkedin_url": org["linkedin_url"],
        "twitter_url": org["twitter_url"],
        "facebook_url": org["facebook_url"],
        "founded_year": org["founded_year"],
        "industry": org["industry"],
        "estimated_num_employees": org["employees"],
        "annual_revenue": org["annual_revenue"],
        "total_funding": org["funding_total"],
        "latest_funding_stage": org["last_funding_type"],
        "keywords": org["keywords"],
        "technology_names": org["technologies"],
        "phone": org["phone"],
        "street_address": org["street"],
        "city": org["city"],
        "state": org["region"],
        "country": org["country"],
        "postal_code": org["postal_code"],
        "short_description": org["description"],
        "logo_url": org["logo_url"],
    }


def apollo_person(p: dict, *, reveal: bool = True) -> dict:
    org = p["company"]
    return {
        "id": p["id"],
        "first_name": p["first_name"],
        "last_name": p["last_name"],
        "name": p["full_name"],
        "title": p["title"],
        "headline": p["headline"],
        "seniority": p["seniority"],
        "departments": [p["department"]],
        "linkedin_url": p["linkedin_url"],
        "twitter_url": p["twitter_url"],
        "email": p["email"] if reveal else None,
        "email_status": p["email_status"],
        "city": p["city"],
        "state": p["region"],
        "country": p["country"],
        "organization_id": org["id"],
        "organization": apollo_org(org),
        "employment_history": [
            {
                "organization_name": org["name"],
                "title": p["title"],
                "start_date": p["job_start"],
                "end_date": None,
                "current": True,
            },
            {
                "organization_name": p["previous_company"]["name"],
                "title": p["previous_title"],
                "start_date": p["previous_start"],
                "end_date": p["job_start"],
                "current": False,
            },
        ],
    }


def _apollo_pagination(page) -> dict:
    return {
        "page": page.number,
        "per_page": page.size,
        "total_entries": page.total,
        "total_pages": -(-page.total // page.size) if page.size else 0,
    }


@handles("apollo", "POST", "/api/v1/mixed_people/search")
def apollo_people_search(call: Call):
    titles = call.get("person_titles") or []
    domains = call.get("q_organization_domains_list") or []

    def make(rng, index):
        domain = domains[index % len(domains)] if domains else None
        title = title_case(titles[index % len(titles)]) if titles else None
        return apollo_person(person(rng, domain=domain, title=title), reveal=False)

    page, people = listing(call, make)
    return {"people": people, "contacts": [], "pagination": _apollo_pagination(page)}


def _apollo_match_input(rng, details: dict) -> dict:
    return person(
        rng,
        first=details.get("first_name"),
        last=details.get("last_name"),
        full_name=details.get("name"),
        domain=details.get("domain"),
        company_name=details.get("organization_name"),
        email=details.get("email"),
        linkedin_url=details.get("linkedin_url"),
    )


@handles("apollo", "POST", "/api/v1/people/match")
def apollo_people_match(call: Call):
    return {"person": apollo_person(_apollo_match_input(call.rng(), call.body))}


@handles("apollo", "POST", "/api/v1/people/bulk_match")
def apollo_bulk_match(call: Call):
    details = call.body["details"]
    matches = [
        apollo_person(_apollo_match_input(call.rng(index), item if isinstance(item, dict) else {}))
        for index, item in enumerate(details)
    ]
    return {
        "status": "success",
        "error_code": None,
        "total_requested_enrichments": len(details),
        "unique_enriched_records": len(matches),
        "missing_records": 0,
        "credits_consumed": len(matches),
        "matches": matches,
    }


@handles("apollo", "GET", "/api/v1/organizations/enrich")
def apollo_org_enrich(call: Call):
    return {"organization": apollo_org(company(call.rng(), domain=call.text("domain")))}


@handles("apollo", "POST", "/api/v1/organizations/bulk_enrich")
def apollo_org_bulk(call: Call):
    domains = call.body["domains"]
    organizations = [
        apollo_org(company(call.rng(index), domain=domain)) for index, domain in enumerate(domains)
    ]
    return {
        "status": "success",
        "error_code": None,
        "total_requested_domains": len(domains),
        "unique_domains": len(set(domains)),
        "unique_enriched_records": len(organizations),
        "missing_records": 0,
        "organizations": organizations,
    }


@handles("apollo", "POST", "/api/v1/mixed_companies/search")
def apollo_company_search(call: Call):
    name = call.text("q_organization_name") or None
    page, organizations = listing(
        call, lambda rng, index: apollo_org(company(rng, name=name if index == 0 else None))
    )
    return {
        "organizations": organizations,
        "accounts": [],
        "pagination": _apollo_pagination(page),
    }


@handles("apollo", "GET", "/api/v1/organizations/{organization_id}")
def apollo_org_get(call: Call):
    org = apollo_org(company(call.rng()))
    org["id"] = call.text("organization_id")
    rng = call.rng("departments")
    org["departmental_head_count"] = {
        name: rng.randint(1, 80) for name in ("engineering", "sales", "marketing", "finance")
    }
    org["funding_events"] = [
        {
            "id": short_id(org["id"], n),
            "date": f"{2018 + n * 2}-0{n + 1}-15",
            "type": ("Seed", "Series A", "Series B")[n],
            "amount": str((n + 1) * 5),
            "currency": "$",
            "investors": "Sandbox Ventures",
        }
        for n in range(3)
    ]
    return {"organization": org}


@handles("apollo", "GET", "/api/v1/organizations/{organization_id}/job_postings")
def apollo_job_postings(call: Call):
    org_id = call.text("organization_id")

    def make(rng, index):
        role = rng.choice(TITLES)[0]
        seconds = timestamp(rng, index * 7)
        return {
            "id": short_id(org_id, index),
            "title": role,
            "url": f"https://jobs.example.com/{org_id}/{index + 1}",
            "city": rng.choice(("Berlin", "London", "Austin", "Remote")),
            "state": None,
            "country": rng.choice(("Germany", "United Kingdom", "United States")),
            "last_seen_at": iso(seconds),
            "posted_at": iso(seconds - 86400 * rng.randint(1, 30)),
        }

    page, postings = listing(call, make, total=10 + call.set_seed % 40)
    return {"organization_job_postings": postings, "pagination": _apollo_pagination(page)}


@handles("apollo", "POST", "/api/v1/news_articles/search")
def apollo_news(call: Call):
    org_ids = call.body["organization_ids"]
    categories = call.get("categories") or ["investment", "hires", "product launch"]

    def make(rng, index):
        seconds = timestamp(rng, index * 30)
        category = categories[index % len(categories)]
        return {
            "id": short_id("news", call.set_seed, index),
            "url": f"https://news.example.com/{category}/{index + 1}",
            "domain": "news.example.com",
            "title": title_case(f"{category} " + sentence(rng, category, 6).rstrip(".")),
            "snippet": sentence(rng, category),
            "published_at": iso(seconds),
            "event_categories": [category],
            "organization_id": org_ids[index % len(org_ids)] if org_ids else None,
        }

    page, articles = listing(call, make, total=15 + call.set_seed % 50)
    return {"news_articles": articles, "pagination": _apollo_pagination(page)}


@handles("apollo", "GET", "/v1/auth/health")
def apollo_health(call: Call):
    return {"healthy": True, "is_logged_in": True}


# --- People Data Labs ----------------------------------------------------------------------


def pdl_person(p: dict) -> dict:
    org = p["company"]
    return {
        "id": short_id("pdl", p["id"], length=22),
        "full_name": p["full_name"].lower(),
        "first_name": p["first_name"].lower(),
        "last_name": p["last_name"].lower(),
        "sex": None,
        "linkedin_url": p["linkedin_url"].removeprefix("https://www."),
        "linkedin_username": p["linkedin_username"],
        "work_email": p["email"],
        "personal_emails": [p["personal_email"]],
        "emails": [{"address": p["email"], "type": "current_professional"}],
        "mobile_phone": p["mobile_phone"].replace(" ", "").replace("-", ""),
        "phone_numbers": [p["phone"].replace(" ", "").replace("-", "")],
        "industry": org["industry"],
        "job_title": p["title"].lower(),
        "job_title_role": p["department"],
        "job_title_levels": [p["seniority"]],
        "job_company_name": org["name"].lower(),
        "job_company_website": org["domain"],
        "job_company_size": org["employee_range"],
        "job_company_industry": org["industry"],
        "job_start_date": p["job_start"][:7],
        "location_name": p["location"].lower(),
        "location_locality": p["city"].lower(),
        "location_region": p["region"].lower(),
        "location_country": p["country"].lower(),
        "skills": p["skills"],
        "experience": [
            {
                "company": {"name": org["name"].lower(), "website": org["domain"]},
                "title": {"name": p["title"].lower()},
                "start_date": p["job_start"][:7],
                "end_date": None,
                "is_primary": True,
            },
            {
                "company": {"name": p["previous_company"]["name"].lower()},
                "title": {"name": p["previous_title"].lower()},
                "start_date": p["previous_start"][:7],
                "end_date": p["job_start"][:7],
                "is_primary": False,
            },
        ],
        "education": [{"school": {"name": p["school"].lower(), "type": "post-secondary"}}],
    }


def pdl_company(org: dict) -> dict:
    return {
        "id": short_id("pdlc", org["domain"], length=22),
        "name": org["name"].lower(),
        "display_name": org["name"],
        "website": org["domain"],
        "size": org["employee_range"],
        "employee_count": org["employees"],
        "founded": org["founded_year"],
        "industry": org["industry"],
        "linkedin_url": org["linkedin_url"].removeprefix("https://www."),
        "twitter_url": org["twitter_url"].removeprefix("https://"),
        "location": {
            "name": f"{org['city']}, {org['region']}, {org['country']}".lower(),
            "locality": org["city"].lower(),
            "region": org["region"].lower(),
            "country": org["country"].lower(),
        },
        "tags": org["keywords"],
        "summary": org["description"],
        "total_funding_raised": org["funding_total"],
        "latest_funding_stage": org["last_funding_type"],
        "ticker": org["ticker"],
    }


def _pdl_person_input(rng, params: dict) -> dict:
    return person(
        rng,
        full_name=params.get("name"),
        first=params.get("first_name"),
        last=params.get("last_name"),
        email=params.get("email"),
        company_name=params.get("company"),
        linkedin_url=params.get("profile"),
    )


@handles("peopledatalabs", "GET", "/v5/person/enrich")
def pdl_person_enrich(call: Call):
    return {
        "status": 200,
        "likelihood": 6 + call.seed % 5,
        "data": pdl_person(_pdl_person_input(call.rng(), call.inputs)),
    }


@handles("peopledatalabs", "POST", "/v5/person/bulk")
def pdl_person_bulk(call: Call):
    answers = []
    for index, request in enumerate(call.body["requests"]):
        request = request if isinstance(request, dict) else {}
        answer = {
            "status": 200,
            "likelihood": 6 + (call.seed + index) % 5,
            "data": pdl_person(_pdl_person_input(call.rng(index), request.get("params") or {})),
        }
        if "metadata" in request:
            answer["metadata"] = request["metadata"]
        answers.append(answer)
    return answers


@handles("peopledatalabs", "GET", "/v5/person/identify")
def pdl_identify(call: Call):
    rng = call.rng()
    matches = [
        {"match_score": 95 - index * 9, "matched_on": ["name"], "data": pdl_person(p)}
        for index, p in enumerate(_pdl_person_input(rng, call.inputs) for _ in range(3))
    ]
    return {"status": 200, "matches": matches}


def _pdl_search(call: Call, make):
    page, items = listing(call, make, default_size=1)
    body = {"status": 200, "data": items, "total": page.total}
    if page.next_cursor:
        body["scroll_token"] = page.next_cursor
    return body


@handles("peopledatalabs", "GET", "/v5/person/search")
def pdl_person_search(call: Call):
    return _pdl_search(call, lambda rng, index: pdl_person(person(rng)))


@handles("peopledatalabs", "GET", "/v5/company/search")
def pdl_company_search(call: Call):
    return _pdl_search(call, lambda rng, index: pdl_company(company(rng)))


@handles("peopledatalabs", "GET", "/v5/company/enrich")
def pdl_company_enrich(call: Call):
    org = company(call.rng(), domain=call.text("website") or None, name=call.text("name") or None)
    return {"status": 200, "likelihood": 8, **pdl_company(org)}


@handles("peopledatalabs", "POST", "/v5/company/enrich/bulk")
def pdl_company_bulk(call: Call):
    answers = []
    for index, request in enumerate(call.body["requests"]):
        params = (request.get("params") if isinstance(request, dict) else None) or {}
        org = company(call.rng(index), domain=params.get("website"), name=params.get("name"))
        answer = {"status": 200, "likelihood": 8, **pdl_company(org)}
        if isinstance(request, dict) and "metadata" in request:
            answer["metadata"] = request["metadata"]
        answers.append(answer)
    return answers


@handles("peopledatalabs", "GET", "/v5/autocomplete")
def pdl_autocomplete(call: Call):
    field, text = call.text("field"), call.text("text", "a").lower()
    size = int(call.get("size") or 10)
    rng = call.rng()
    bank = {"skill": SKILLS, "industry": INDUSTRIES, "title": [t[0].lower() for t in TITLES]}.get(
        field, [company(rng)["name"].lower() for _ in range(size)]
    )
    data = [
        {"name": f"{text} {value}".strip() if text not in value else value, "count": 9000 - n * 37}
        for n, value in enumerate(list(bank)[:size])
    ]
    return {"status": 200, "data": data, "fields": [field]}


@handles("peopledatalabs", "GET", "/v5/company/clean")
def pdl_company_clean(call: Call):
    org = company(call.rng(), domain=call.text("website") or None, name=call.text("name") or None)
    return {"status": 200, **pdl_company(org)}


@handles("peopledatalabs", "GET", "/v5/location/clean")
def pdl_location_clean(call: Call):
    raw = call.text("location")
    parts = [part.strip().lower() for part in raw.split(",") if part.strip()]
    rng = call.rng()
    return {
        "status": 200,
        "name": ", ".join(parts) or raw.lower(),
        "locality": parts[0] if parts else None,
        "region": parts[1] if len(parts) > 1 else None,
        "country": parts[-1] if len(parts) > 2 else "united states",
        "continent": "north america",
        "type": "locality",
        "geo": f"{rng.uniform(-60, 60):.4f},{rng.uniform(-120, 120):.4f}",
    }


@handles("peopledatalabs", "GET", "/v5/job_title/enrich")
def pdl_job_title(call: Call):
    title = call.text("job_title").lower()
    rng = call.rng()
    related = [t[0].lower() for t in rng.sample(TITLES, 4)]
    return {
        "status": 200,
        "data": {
            "cleaned_job_title": title,
            "similar_job_titles": related,
            "relevant_skills": rng.sample(SKILLS, 5),
            "role": rng.choice(TITLES)[2],
            "sub_role": None,
            "levels": [rng.choice(TITLES)[1]],
        },
    }


@handles("peopledatalabs", "GET", "/v5/ip/enrich")
def pdl_ip(call: Call):
    rng = call.rng()
    org = company(rng)
    data = {
        "ip": {"address": call.text("ip"), "metadata": {"version": 4, "mobile": False}},
        "company": pdl_company(org),
        "location": {"locality": org["city"].lower(), "country": org["country"].lower()},
    }
    if call.get("return_person"):
        data["person"] = pdl_person(person(rng, domain=org["domain"]))
    return {"status": 200, "likelihood": 7, "data": data}


# --- Lusha -----------------------------------------------------------------------------------


def lusha_contact(p: dict) -> dict:
    org = p["company"]
    return {
        "id": short_id("lusha", p["id"], length=12),
        "firstName": p["first_name"],
        "lastName": p["last_name"],
        "fullName": p["full_name"],
        "jobTitle": {"title": p["title"], "seniority": p["seniority"]},
        "emailAddresses": [
            {"email": p["email"], "emailType": "work", "emailConfidence": "A+"},
            {"email": p["personal_email"], "emailType": "personal", "emailConfidence": "A"},
        ],
        "phoneNumbers": [
            {"number": p["phone"], "phoneType": "direct", "doNotCall": False},
            {"number": p["mobile_phone"], "phoneType": "mobile", "doNotCall": False},
        ],
        "location": {"city": p["city"], "country": p["country"], "countryIso2": p["country_code"]},
        "socialLinks": {"linkedin": p["linkedin_url"]},
        "company": lusha_company(org),
    }


def lusha_company(org: dict) -> dict:
    return {
        "id": int(org["id"][:8], 16),
        "name": org["name"],
        "domain": org["domain"],
        "fqdn": org["domain"],
        "description": org["description"],
        "employees": org["employee_range"],
        "revenueRange": [org["annual_revenue"] // 2, org["annual_revenue"]],
        "mainIndustry": org["industry"],
        "founded": str(org["founded_year"]),
        "location": {"city": org["city"], "country": org["country"]},
        "social": {"linkedin": org["linkedin_url"]},
        "technologies": org["technologies"],
    }


@handles("lusha", "GET", "/v2/person")
def lusha_person(call: Call):
    p = person(
        call.rng(),
        first=call.text("firstName") or None,
        last=call.text("lastName") or None,
        company_name=call.text("companyName") or None,
        domain=call.text("companyDomain") or None,
        email=call.text("email") or None,
        linkedin_url=call.text("linkedinUrl") or None,
    )
    return {"contact": {"error": None, "isCreditCharged": True, "data": lusha_contact(p)}}


@handles("lusha", "POST", "/v2/person")
def lusha_person_bulk(call: Call):
    contacts = {}
    for index, item in enumerate(call.body["contacts"]):
        item = item if isinstance(item, dict) else {}
        key = str(item.get("contactId") or index + 1)
        p = person(
            call.rng(index),
            full_name=item.get("fullName"),
            email=item.get("email"),
            linkedin_url=item.get("linkedinUrl"),
        )
        contacts[key] = {"error": None, "isCreditCharged": True, "data": lusha_contact(p)}
    return {"contacts": contacts}


@handles("lusha", "GET", "/v2/company")
def lusha_company_get(call: Call):
    org = company(call.rng(), domain=call.text("domain") or None, name=call.text("company") or None)
    return {"data": lusha_company(org)}


@handles("lusha", "POST", "/v2/company")
def lusha_company_bulk(call: Call):
    companies = {}
    for index, item in enumerate(call.body["companies"]):
        item = item if isinstance(item, dict) else {}
        key = str(item.get("id") or index + 1)
        org = company(
            call.rng(index), domain=item.get("domain") or item.get("fqdn"), name=item.get("name")
        )
        companies[key] = lusha_company(org)
    return {"companies": companies}


def _lusha_search(call: Call, make, key: str):
    page = page_for(call, default_size=20)
    request_id = short_id("lusha-request", call.set_seed, length=32)
    items = [make(call.item_rng(index), index) for index in page.indices]
    return {
        "requestId": request_id,
        "currentPage": page.offset // page.size if page.size else 0,
        "totalResults": page.total,
        key: items,
    }


@handles("lusha", "POST", "/prospecting/contact/search")
def lusha_contact_search(call: Call):
    def make(rng, index):
        p = person(rng)
        return {
            "contactId": short_id("lusha", p["id"], length=12),
            "name": p["full_name"],
            "jobTitle": p["title"],
            "companyName": p["company"]["name"],
            "hasEmails": True,
            "hasPhones": rng.random() < 0.7,
        }

    return _lusha_search(call, make, "data")


@handles("lusha", "POST", "/prospecting/contact/enrich")
def lusha_contact_enrich(call: Call):
    contacts = [
        {"id": contact_id, "isSuccess": True, "data": lusha_contact(person(call.rng(contact_id)))}
        for contact_id in call.body["contactIds"]
    ]
    return {"requestId": call.body["requestId"], "contacts": contacts}


@handles("lusha", "POST", "/prospecting/company/search")
def lusha_company_search(call: Call):
    def make(rng, index):
        org = company(rng)
        return {"id": str(int(org["id"][:8], 16)), "name": org["name"], "domain": org["domain"]}

    return _lusha_search(call, make, "data")


@handles("lusha", "POST", "/prospecting/company/enrich")
def lusha_company_enrich(call: Call):
    companies = [
        {"id": company_id, **lusha_company(company(call.rng(company_id)))}
        for company_id in call.body["companiesIds"]
    ]
    return {"requestId": call.body["requestId"], "companies": companies}


@handles("lusha", "GET", "/account/usage")
def lusha_usage(call: Call):
    return {
        "usage": {"used": 1240, "remaining": 8760, "total": 10000},
        "rateLimits": {"dailyLimit": 25000, "hourlyLimit": 1000, "minuteLimit": 100},
    }


# --- RocketReach ----------------------------------------------------------------------------


def rocketreach_profile(p: dict, profile_id: int, status: str = "complete") -> dict:
    org = p["company"]
    return {
        "id": profile_id,
        "status": status,
        "name": p["full_name"],
        "current_title": p["title"],
        "current_employer": org["name"],
        "current_employer_domain": org["domain"],
        "linkedin_url": p["linkedin_url"],
        "location": p["location"],
        "city": p["city"],
        "country_code": p["country_code"],
        "emails": [
            {"email": p["email"], "type": "professional", "grade": "A", "smtp_valid": "valid"},
            {"email": p["personal_email"], "type": "personal", "grade": "B", "smtp_valid": "valid"},
        ],
        "phones": [{"number": p["phone"], "type": "professional", "validity": "valid"}],
        "current_work_email": p["email"],
        "current_personal_email": p["personal_email"],
        "skills": p["skills"],
    }


@handles("rocketreach", "GET", "/api/v2/person/lookup")
def rocketreach_lookup(call: Call):
    profile_id = int(call.get("id") or 10_000_000 + call.seed % 90_000_000)
    p = person(
        call.rng(),
        full_name=call.text("name") or None,
        company_name=call.text("current_employer") or None,
        title=call.text("title") or None,
        email=call.text("email") or None,
        linkedin_url=call.text("linkedin_url") or None,
    )
    return rocketreach_profile(p, profile_id)


@handles("rocketreach", "GET", "/api/v2/person/checkStatus")
def rocketreach_status(call: Call):
    ids = [part.strip() for part in call.text("ids").split(",") if part.strip()]
    return [
        rocketreach_profile(person(call.rng(value)), int(value) if value.isdigit() else 0)
        for value in ids
    ]


@handles("rocketreach", "POST", "/api/v2/person/search")
def rocketreach_search(call: Call):
    def make(rng, index):
        p = person(rng)
        return {
            "id": 10_000_000 + (call.set_seed + index) % 90_000_000,
            "status": "complete",
            "name": p["full_name"],
            "current_title": p["title"],
            "current_employer": p["company"]["name"],
            "linkedin_url": p["linkedin_url"],
            "location": p["location"],
            "teaser": {"emails": [p["company"]["domain"]], "phones": [{"is_premium": False}]},
        }

    page, profiles = listing(call, make)
    return {
        "profiles": profiles,
        "pagination": {"start": page.offset + 1, "next": page.next_offset + 1, "total": page.total},
    }


def rocketreach_company(org: dict) -> dict:
    return {
        "id": int(org["id"][:7], 16),
        "name": org["name"],
        "domain": org["domain"],
        "email_domain": org["domain"],
        "website_url": org["website"],
        "industry": org["industry"],
        "num_employees": org["employees"],
        "revenue": org["annual_revenue"],
        "year_founded": org["founded_year"],
        "address": {"city": org["city"], "country": org["country"], "street": org["street"]},
        "phone": org["phone"],
        "linkedin_url": org["linkedin_url"],
        "techstack": org["technologies"],
        "description": org["description"],
    }


@handles("rocketreach", "GET", "/api/v2/company/lookup")
def rocketreach_company_lookup(call: Call):
    name = first_text(call, "name") or None
    return rocketreach_company(company(call.rng(), domain=call.text("domain") or None, name=name))


@handles("rocketreach", "POST", "/api/v2/searchCompany")
def rocketreach_company_search(call: Call):
    page, companies = listing(call, lambda rng, index: rocketreach_company(company(rng)))
    return {
        "companies": companies,
        "pagination": {"start": page.offset + 1, "next": page.next_offset + 1, "total": page.total},
    }


@handles("rocketreach", "GET", "/api/v2/account")
def rocketreach_account(call: Call):
    return {
        "id": 48213,
        "first_name": "Sandbox",
        "last_name": "User",
        "email": "sandbox@example.com",
        "state": "registered",
        "plan": {"name": "Ultimate", "lookups_remaining": 7421, "lookups_per_month": 10000},
    }
