"""Company-enrichment APIs: Crunchbase, OpenCorporates, The Companies API."""

from sandbox.call import Call
from sandbox.generators.people import company, person
from sandbox.generators.social import iso, timestamp
from sandbox.generators.words import TECHNOLOGIES, sentence, slugify, title_case
from sandbox.handlers.common import listing
from sandbox.handlers.registry import handles
from sandbox.jobs import job_new
from sandbox.paging import item_uuid

# --- Crunchbase ------------------------------------------------------------------------------


def _money(value: int) -> dict:
    return {"value": value, "currency": "USD", "value_usd": value}


def crunchbase_org(org: dict, uuid: str) -> dict:
    permalink = slugify(org["name"])
    return {
        "identifier": {
            "uuid": uuid,
            "value": org["name"],
            "permalink": permalink,
            "entity_def_id": "organization",
        },
        "short_description": org["description"][:140],
        "categories": [{"value": org["industry"].title(), "permalink": slugify(org["industry"])}],
        "location_identifiers": [
            {"value": org["city"], "location_type": "city"},
            {"value": org["country"], "location_type": "country"},
        ],
        "founded_on": {"value": f"{org['founded_year']}-01-01", "precision": "year"},
        "num_employees_enum": "c_" + org["employee_range"].replace("-", "_").zfill(5),
        "funding_total": _money(org["funding_total"]),
        "last_funding_type": org["last_funding_type"],
        "website_url": org["website"],
        "linkedin": {"value": org["linkedin_url"]},
        "rank_org": 1000 + int(org["id"][:4], 16),
    }


@handles("crunchbase", "GET", "/api/v4/entities/organizations/{entity_id}")
def crunchbase_get_org(call: Call):
    entity = call.text("entity_id")
    org = company(call.rng(), name=title_case(entity.replace("-", " ")))
    uuid = item_uuid(call.seed, 0)
    properties = crunchbase_org(org, uuid)
    fields = [f for f in call.text("field_ids").split(",") if f]
    if fields:
        properties = {k: v for k, v in properties.items() if k in fields or k == "identifier"}
    body = {"properties": properties, "cards": {}}
    cards = [c for c in call.text("card_ids").split(",") if c]
    rng = call.rng("cards")
    if "raised_funding_rounds" in cards:
        body["cards"]["raised_funding_rounds"] = [
            {
                "identifier": {"uuid": item_uuid(call.seed, n + 1), "value": f"Series {'AB'[n]}"},
                "announced_on": f"{2019 + n * 2}-05-10",
                "money_raised": _money(rng.randint(2, 40) * 1_000_000),
                "investment_type": f"series_{'ab'[n]}",
            }
            for n in range(2)
        ]
    if "founders" in cards:
        body["cards"]["founders"] = [
            {"identifier": {"value": person(rng)["full_name"], "entity_def_id": "person"}}
        ]
    if "headquarters_address" in cards:
        body["cards"]["headquarters_address"] = [
            {"location_identifiers": properties.get("location_identifiers", [])}
        ]
    return body


def _crunchbase_search(call: Call, make):
    page, entities = listing(call, make, default_size=50)
    return {"count": page.total, "entities": entities}


@handles("crunchbase", "POST", "/api/v4/searches/organizations")
def crunchbase_search_orgs(call: Call):
    def make(rng, index):
        uuid = item_uuid(call.set_seed, index)
        return {"uuid": uuid, "properties": crunchbase_org(company(rng), uuid)}

    return _crunchbase_search(call, make)


@handles("crunchbase", "POST", "/api/v4/searches/funding_rounds")
def crunchbase_search_rounds(call: Call):
    def make(rng, index):
        uuid = item_uuid(call.set_seed, index)
        org = company(rng)
        kind = rng.choice(("seed", "series_a", "series_b", "series_c"))
        return {
            "uuid": uuid,
            "properties": {
                "identifier": {
                    "uuid": uuid,
                    "value": f"{title_case(kind)} - {org['name']}",
                    "entity_def_id": "funding_round",
                },
                "announced_on": iso(timestamp(rng, index * 20))[:10],
                "money_raised": _money(rng.randint(1, 80) * 1_000_000),
                "investment_type": kind,
                "funded_organization_identifier": {"value": org["name"]},
                "investor_identifiers": [
                    {"value": "Sandbox Ventures"},
                    {"value": "Example Capital"},
                ],
            },
        }

    return _crunchbase_search(call, make)


@handles("crunchbase", "GET", "/api/v4/entities/people/{entity_id}")
def crunchbase_person(call: Call):
    entity = call.text("entity_id")
    p = person(call.rng(), full_name=title_case(entity.replace("-", " ")) or None)
    uuid = item_uuid(call.seed, 0)
    return {
        "properties": {
            "identifier": {
                "uuid": uuid,
                "value": p["full_name"],
                "permalink": slugify(p["full_name"]),
                "entity_def_id": "person",
            },
            "first_name": p["first_name"],
            "last_name": p["last_name"],
            "primary_job_title": p["title"],
            "primary_organization": {"value": p["company"]["name"]},
            "location_identifiers": [{"value": p["city"]}, {"value": p["country"]}],
            "description": sentence(call.rng("bio"), p["title"]),
            "num_investments": call.seed % 12,
            "linkedin": {"value": p["linkedin_url"]},
        },
        "cards": {},
    }


@handles("crunchbase", "GET", "/api/v4/autocompletes")
def crunchbase_autocomplete(call: Call):
    query = call.text("query")
    limit = int(call.get("limit") or 10)
    entities = []
    for index in range(min(limit, 25)):
        org = company(call.rng(index))
        name = f"{title_case(query)}{org['name'].split()[-1]}" if index else title_case(query)
        entities.append(
            {
                "identifier": {
                    "uuid": item_uuid(call.seed, index),
                    "value": name,
                    "permalink": slugify(name),
                    "entity_def_id": "organization",
                },
                "short_description": org["description"][:100],
            }
        )
    return {"count": len(entities), "entities": entities}


# --- OpenCorporates --------------------------------------------------------------------------


def _jurisdiction(country_code: str) -> str:
    return {"US": "us_de"}.get(country_code, country_code.lower())


def oc_company(
    rng, *, name: str | None = None, jurisdiction: str | None = None, number: str | None = None
) -> dict:
    org = company(rng, name=name)
    jurisdiction = jurisdiction or _jurisdiction(org["country_code"])
    number = number or f"{rng.randint(100000, 99999999):08d}"
    return {
        "name": org["legal_name"].upper(),
        "company_number": number,
        "jurisdiction_code": jurisdiction,
        "incorporation_date": f"{org['founded_year']}-{rng.randint(1, 12):02d}-"
        f"{rng.randint(1, 28):02d}",
        "dissolution_date": None,
        "company_type": "Private Limited Company",
        "registry_url": f"https://registry.example.gov/{jurisdiction}/{number}",
        "branch": None,
        "inactive": False,
        "current_status": "Active",
        "created_at": "2016-05-03T10:00:00+00:00",
        "updated_at": "2025-10-01T10:00:00+00:00",
        "previous_names": [],
        "registered_address_in_full": f"{org['street']}, {org['city']}, {org['postal_code']}",
        "registered_address": {
            "street_address": org["street"],
            "locality": org["city"],
            "postal_code": org["postal_code"],
            "country": org["country"],
        },
        "industry_codes": [
            {
                "industry_code": {
                    "code": "62.01",
                    "description": "Computer programming activities",
                    "code_scheme_id": "eu_nace_2",
                }
            }
        ],
        "opencorporates_url": f"https://opencorporates.com/companies/{jurisdiction}/{number}",
    }


def _oc_page(page, key: str, items: list) -> dict:
    return {
        "api_version": "0.4",
        "results": {
            key: items,
            "page": page.number,
            "per_page": page.size,
            "total_pages": -(-page.total // page.size) if page.size else 0,
            "total_count": page.total,
        },
    }


@handles("opencorporates", "GET", "/v0.4/companies/search")
def oc_search(call: Call):
    query = title_case(call.text("q"))
    jurisdiction = call.text("jurisdiction_code") or None

    def make(rng, index):
        name = f"{query} {rng.choice(('Holdings', 'Services', 'Trading', 'Group', ''))}".strip()
        return {"company": oc_company(rng, name=name, jurisdiction=jurisdiction)}

    page, companies = listing(call, make, default_size=30)
    return _oc_page(page, "companies", companies)


@handles("opencorporates", "GET", "/v0.4/companies/{jurisdiction_code}/{company_number}")
def oc_company_get(call: Call):
    rng = call.rng()
    record = oc_company(
        rng, jurisdiction=call.text("jurisdiction_code"), number=call.text("company_number")
    )
    if not call.get("sparse"):
        record["officers"] = [
            {
                "officer": {
                    "id": 100000 + rng.randint(0, 900000),
                    "name": person(rng)["full_name"].upper(),
                    "position": position,
                    "start_date": "2019-04-01",
                    "end_date": None,
                }
            }
            for position in ("director", "secretary")
        ]
        record["filings"] = []
    return {"api_version": "0.4", "results": {"company": record}}


@handles("opencorporates", "GET", "/v0.4/companies/{jurisdiction_code}/{company_number}/filings")
def oc_filings(call: Call):
    kinds = ("Annual Return", "Full Accounts", "Change of Officers", "Confirmation Statement")

    def make(rng, index):
        date = iso(timestamp(rng, index * 24 * 60))[:10]
        return {
            "filing": {
                "id": 500000000 + call.set_seed % 1000000 + index,
                "title": rng.choice(kinds),
                "date": date,
                "description": sentence(rng, "filing", 6),
                "filing_type": "AA",
                "opencorporates_url": f"https://opencorporates.com/statements/{500000000 + index}",
            }
        }

    page, filings = listing(call, make, default_size=30, total=20 + call.set_seed % 60)
    return _oc_page(page, "filings", filings)


def oc_officer(rng, officer_id: int, name: str | None = None) -> dict:
    p = person(rng, full_name=name)
    record = oc_company(rng)
    return {
        "id": officer_id,
        "uid": None,
        "name": p["full_name"].upper(),
        "position": rng.choice(("director", "secretary", "chief executive officer")),
        "start_date": p["job_start"],
        "end_date": None,
        "occupation": p["title"].upper(),
        "nationality": p["country"].upper(),
        "inactive": False,
        "company": {
            k: record[k]
            for k in ("name", "jurisdiction_code", "company_number", "opencorporates_url")
        },
        "opencorporates_url": f"https://opencorporates.com/officers/{officer_id}",
    }


@handles("opencorporates", "GET", "/v0.4/officers/search")
def oc_officers_search(call: Call):
    name = title_case(call.text("q"))
    page, officers = listing(
        call,
        lambda rng, index: {
            "officer": oc_officer(rng, 100000 + index + call.set_seed % 10**6, name)
        },
        default_size=30,
    )
    return _oc_page(page, "officers", officers)


@handles("opencorporates", "GET", "/v0.4/officers/{id}")
def oc_officer_get(call: Call):
    return {
        "api_version": "0.4",
        "results": {"officer": oc_officer(call.rng(), int(call.get("id")))},
    }


@handles("opencorporates", "GET", "/v0.4/jurisdictions")
def oc_jurisdictions(call: Call):
    codes = {
        "gb": "United Kingdom",
        "us_de": "Delaware (US)",
        "us_ca": "California (US)",
        "de": "Germany",
        "fr": "France",
        "nl": "Netherlands",
        "ie": "Ireland",
        "sg": "Singapore",
    }
    return {
        "api_version": "0.4",
        "results": {
            "jurisdictions": [
                {"jurisdiction": {"code": code, "name": name, "country": name.split(" (")[0]}}
                for code, name in codes.items()
            ]
        },
    }


@handles("opencorporates", "GET", "/v0.4/account_status")
def oc_account(call: Call):
    return {
        "api_version": "0.4",
        "results": {
            "account_status": {
                "plan": "sandbox",
                "status": "approved",
                "expiry_date": "2026-12-31",
                "usage": {"today": 12, "this_month": 340},
                "calls_remaining": {"today": 988, "this_month": 9660},
            }
        },
    }


# --- The Companies API -----------------------------------------------------------------------


def tca_company(org: dict, simplified: bool = False) -> dict:
    record = {
        "id": int(org["id"][:8], 16),
        "domain": {"domain": org["domain"], "tld": org["domain"].rsplit(".", 1)[-1]},
        "about": {
            "name": org["name"],
            "nameLegal": org["legal_name"],
            "industries": [org["industry"]],
            "totalEmployees": org["employee_range"],
            "yearFounded": org["founded_year"],
            "businessType": "private",
        },
        "locations": {
            "headquarters": {
                "city": {"name": org["city"]},
                "country": {"code": org["country_code"].lower(), "name": org["country"]},
            }
        },
    }
    if not simplified:
        record.update(
            {
                "descriptions": {"primary": org["description"], "tagline": org["description"][:60]},
                "finances": {"revenue": org["annual_revenue"], "stockExchange": None},
                "technologies": {"active": org["technologies"]},
                "socials": {
                    "linkedin": {"url": org["linkedin_url"]},
                    "twitter": {"url": org["twitter_url"]},
                },
                "contacts": {"phones": [org["phone"]], "emails": [f"hello@{org['domain']}"]},
            }
        )
    return record


def _tca_list(page, items: list) -> dict:
    return {
        "companies": items,
        "meta": {
            "currentPage": page.number,
            "lastPage": -(-page.total // page.size) if page.size else 0,
            "perPage": page.size,
            "total": page.total,
        },
    }


@handles("thecompaniesapi", "GET", "/v2/companies/{domain}")
def tca_company_get(call: Call):
    return tca_company(
        company(call.rng(), domain=call.text("domain")), bool(call.get("simplified"))
    )


@handles("thecompaniesapi", "GET", "/v2/companies/by-email")
def tca_by_email(call: Call):
    email = call.text("email")
    domain = email.split("@")[-1]
    org = company(call.rng(), domain=domain)
    return {
        "company": tca_company(org, bool(call.get("simplified"))),
        "email": {
            "address": email,
            "domain": domain,
            "isFree": domain in ("gmail.com", "yahoo.com"),
            "isDisposable": False,
        },
    }


@handles("thecompaniesapi", "GET", "/v2/companies/by-social")
def tca_by_social(call: Call):
    url = next(
        (
            call.text(n)
            for n in ("linkedin", "twitter", "facebook", "instagram", "github")
            if call.text(n)
        ),
        "",
    )
    name = title_case(url.rstrip("/").rsplit("/", 1)[-1].replace("-", " ")) if url else None
    return tca_company(company(call.rng(), name=name))


@handles("thecompaniesapi", "POST", "/v2/companies")
def tca_search(call: Call):
    search = call.text("search") or None
    page, items = listing(
        call,
        lambda rng, index: tca_company(
            company(rng, name=search if index == 0 else None), bool(call.get("simplified"))
        ),
    )
    return _tca_list(page, items)


@handles("thecompaniesapi", "GET", "/v2/companies/by-name")
def tca_by_name(call: Call):
    name = title_case(call.text("name"))
    page, items = listing(
        call,
        lambda rng, index: tca_company(
            company(
                rng,
                name=name if index == 0 else f"{name} {rng.choice(('Group', 'Labs', 'Holdings'))}",
            ),
            True,
        ),
        total=5 + call.set_seed % 20,
    )
    return _tca_list(page, items)


@handles("thecompaniesapi", "GET", "/v2/companies/similar")
def tca_similar(call: Call):
    page, items = listing(call, lambda rng, index: tca_company(company(rng), True))
    return _tca_list(page, items)


@handles("thecompaniesapi", "GET", "/v2/companies/{domain}/email-patterns")
def tca_patterns(call: Call):
    rng = call.rng()
    shares = sorted((rng.randint(5, 60) for _ in range(3)), reverse=True)
    return [
        {"pattern": pattern, "usagePercentage": share}
        for pattern, share in zip(("[first].[last]", "[first]", "[f][last]"), shares, strict=True)
    ]


@handles("thecompaniesapi", "GET", "/v2/companies/{domain}/ask")
def tca_ask(call: Call):
    rng = call.rng()
    question = call.text("question")
    return {
        "answer": {
            "response": rng.choice(("yes", "no", "partially")),
            "explanation": sentence(rng, question),
        },
        "question": question,
        "model": call.text("model", "small"),
        "company": tca_company(company(rng, domain=call.text("domain")), True),
    }


@handles("thecompaniesapi", "POST", "/v2/actions")
def tca_request_action(call: Call):
    domains = call.body["domains"]
    if call.get("estimate"):
        return {"actions": [], "cost": len(domains), "estimate": True}
    job = job_new("companies_action", seed=call.seed, count=len(domains))
    return {
        "actions": [
            {
                "id": int(job.hex[:8], 16),
                "type": "jobs:request",
                "job": "enrich-companies",
                "status": "pending",
                "cost": len(domains),
                "data": {"domains": domains[:5], "count": len(domains)},
                "jobId": job.hex,
            }
        ]
    }


@handles("thecompaniesapi", "GET", "/v2/actions")
def tca_actions(call: Call):
    ids = call.get("ids") or []
    status = call.text("status") or None

    def make(rng, index):
        action_id = ids[index] if index < len(ids) else 1000 + index + call.set_seed % 10**5
        return {
            "id": action_id,
            "type": "jobs:request",
            "job": "enrich-companies",
            "status": status or rng.choice(("completed", "completed", "active", "pending")),
            "cost": rng.randint(1, 400),
            "createdAt": iso(timestamp(rng, index * 10)),
        }

    page, actions = listing(call, make, total=len(ids) or 5 + call.set_seed % 20)
    return {
        "actions": actions,
        "meta": {"currentPage": page.number, "perPage": page.size, "total": page.total},
    }


@handles("thecompaniesapi", "GET", "/v2/technologies")
def tca_technologies(call: Call):
    search = call.text("search").lower()
    names = [t for t in TECHNOLOGIES if search in t] or TECHNOLOGIES
    page, items = listing(
        call,
        lambda rng, index: {
            "id": index + 1,
            "name": names[index % len(names)],
            "slug": slugify(names[index % len(names)]),
            "companiesCount": rng.randint(100, 900000),
        },
        total=len(names),
    )
    return {
        "technologies": items,
        "meta": {"currentPage": page.number, "perPage": page.size, "total": page.total},
    }


@handles("thecompaniesapi", "GET", "/v2/user")
def tca_user(call: Call):
    return {
        "user": {"id": 4242, "email": "sandbox@example.com", "name": "Sandbox User"},
        "team": {"id": 17, "name": "Sandbox", "credits": 4950},
    }
