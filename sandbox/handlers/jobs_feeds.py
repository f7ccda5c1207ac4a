"""Job-posting APIs: Adzuna, TheirStack, USAJOBS."""

from sandbox.call import Call
from sandbox.generators.people import company
from sandbox.generators.postings import posting
from sandbox.generators.words import TECHNOLOGIES, title_case
from sandbox.handlers.common import listing
from sandbox.handlers.registry import handles

# --- Adzuna ----------------------------------------------------------------------------------


def adzuna_job(p: dict, country: str) -> dict:
    return {
        "__CLASS__": "Adzuna::API::Response::Job",
        "id": p["id"],
        "title": p["title"],
        "description": p["description"][:500],
        "created": p["posted_at"][:19] + "Z",
        "redirect_url": f"https://www.adzuna.{'co.uk' if country == 'gb' else 'com'}/land/ad/"
        f"{p['id']}",
        "company": {
            "__CLASS__": "Adzuna::API::Response::Company",
            "display_name": p["company"]["name"],
        },
        "location": {
            "__CLASS__": "Adzuna::API::Response::Location",
            "display_name": p["location"],
            "area": [p["country"], p["city"]],
        },
        "category": {
            "__CLASS__": "Adzuna::API::Response::Category",
            "tag": "it-jobs",
            "label": "IT Jobs",
        },
        "salary_min": p["salary_min"],
        "salary_max": p["salary_max"],
        "salary_is_predicted": "0",
        "contract_type": p["contract_type"],
        "contract_time": p["contract_time"],
        "latitude": 51.5,
        "longitude": -0.12,
    }


@handles("adzuna", "GET", "/v1/api/jobs/{country}/search/{page}")
def adzuna_search(call: Call):
    country = call.text("country")
    what, where = call.text("what"), call.text("where")
    page, results = listing(
        call,
        lambda rng, index: adzuna_job(
            posting(rng, what=what, where=where, index=index, country=country), country
        ),
    )
    rng = call.rng("mean")
    return {
        "__CLASS__": "Adzuna::API::Response::JobSearchResults",
        "count": page.total,
        "mean": rng.randint(40000, 90000),
        "results": results,
    }


@handles("adzuna", "GET", "/v1/api/jobs/{country}/categories")
def adzuna_categories(call: Call):
    labels = (
        "IT Jobs",
        "Sales Jobs",
        "Engineering Jobs",
        "Accounting & Finance Jobs",
        "Healthcare & Nursing Jobs",
        "Teaching Jobs",
        "Logistics & Warehouse Jobs",
    )
    return {
        "__CLASS__": "Adzuna::API::Response::Categories",
        "results": [
            {
                "__CLASS__": "Adzuna::API::Response::Category",
                "tag": label.lower().replace(" & ", "-").replace(" ", "-"),
                "label": label,
            }
            for label in labels
        ],
    }


@handles("adzuna", "GET", "/v1/api/jobs/{country}/histogram")
def adzuna_histogram(call: Call):
    rng = call.rng()
    return {
        "__CLASS__": "Adzuna::API::Response::SalaryHistogram",
        "histogram": {str(low): rng.randint(5, 900) for low in range(20000, 140001, 20000)},
    }


@handles("adzuna", "GET", "/v1/api/jobs/{country}/top_companies")
def adzuna_top_companies(call: Call):
    leaderboard = []
    for index in range(10):
        rng = call.rng(index)
        leaderboard.append(
            {
                "__CLASS__": "Adzuna::API::Response::Company",
                "canonical_name": company(rng)["name"],
                "count": 900 - index * 70 - rng.randint(0, 60),
                "average_salary": rng.randint(40000, 95000),
            }
        )
    return {"__CLASS__": "Adzuna::API::Response::TopCompanies", "leaderboard": leaderboard}


@handles("adzuna", "GET", "/v1/api/jobs/{country}/history")
def adzuna_history(call: Call):
    rng = call.rng()
    months = int(call.get("months") or 12)
    base = rng.randint(40000, 70000)
    month = {}
    for n in range(months):
        year, index = 2025 - (n // 12), 12 - n % 12
        month[f"{year}-{index:02d}"] = base + rng.randint(-3000, 3000)
    return {
        "__CLASS__": "Adzuna::API::Response::HistoricalSalary",
        "month": dict(sorted(month.items())),
    }


# --- TheirStack ------------------------------------------------------------------------------


def theirstack_job(p: dict, index: int) -> dict:
    org = p["company"]
    return {
        "id": int(p["id"]) % 10**9,
        "job_title": p["title"],
        "url": p["url"],
        "date_posted": p["date"],
        "has_blurred_data": False,
        "company": org["name"],
        "company_domain": org["domain"],
        "final_url": p["url"],
        "location": p["location"],
        "short_location": p["city"],
        "country_code": p["country_code"],
        "remote": p["remote"],
        "hybrid": False,
        "salary_string": f"${p['salary_min']:,} - ${p['salary_max']:,}",
        "min_annual_salary_usd": p["salary_min"],
        "max_annual_salary_usd": p["salary_max"],
        "seniority": p["seniority"],
        "technology_slugs": p["technologies"],
        "description": p["description"],
        "company_object": {
            "name": org["name"],
            "domain": org["domain"],
            "industry": org["industry"],
            "employee_count": org["employees"],
            "linkedin_url": org["linkedin_url"],
        },
    }


@handles("theirstack", "POST", "/v1/jobs/search")
def theirstack_jobs(call: Call):
    titles = call.get("job_title_or") or []
    countries = call.get("job_country_code_or") or []
    locations = call.get("job_location_pattern_or") or []

    def make(rng, index):
        p = posting(
            rng,
            what=titles[index % len(titles)] if titles else "",
            where=locations[index % len(locations)] if locations else "",
            country=countries[index % len(countries)] if countries else "",
            index=index,
        )
        return theirstack_job(p, index)

    page, data = listing(call, make, default_size=25)
    metadata = {
        "total_results": page.total if call.get("include_total_results") else None,
        "truncated_results": 0,
        "truncated_companies": 0,
        "total_companies": None,
    }
    return {"metadata": metadata, "data": data}


@handles("theirstack", "POST", "/v1/companies/search")
def theirstack_companies(call: Call):
    technologies = call.get("company_technology_slug_or") or []

    def make(rng, index):
        org = company(rng)
        return {
            "name": org["name"],
            "domain": org["domain"],
            "industry": org["industry"],
            "country_code": org["country_code"],
            "employee_count": org["employees"],
            "linkedin_url": org["linkedin_url"],
            "num_jobs": rng.randint(1, 300),
            "num_jobs_last_30_days": rng.randint(0, 40),
            "technology_slugs": sorted(set(technologies) | set(org["technologies"][:3])),
        }

    page, data = listing(call, make, default_size=25)
    return {"metadata": {"total_results": page.total, "total_companies": page.total}, "data": data}


@handles("theirstack", "POST", "/v1/companies/technologies")
def theirstack_technographics(call: Call):
    rng = call.rng()
    technologies = rng.sample(TECHNOLOGIES, 8)
    return {
        "data": [
            {
                "technology": {
                    "name": title_case(slug),
                    "slug": slug,
                    "category": rng.choice(("Database", "Cloud", "CRM", "Analytics", "Language")),
                },
                "confidence": rng.choice(("high", "medium", "low")),
                "jobs": rng.randint(1, 120),
                "first_date_found": "2021-03-01",
                "last_date_found": "2025-11-20",
            }
            for slug in technologies
        ]
    }


@handles("theirstack", "GET", "/v0/billing/credit-balance")
def theirstack_credits(call: Call):
    return {"ui_credits": 200, "used_ui_credits": 12, "api_credits": 5000, "used_api_credits": 318}


# --- USAJOBS ---------------------------------------------------------------------------------


def usajobs_item(p: dict, rng) -> dict:
    grade = rng.randint(7, 15)
    control = str(800000000 + int(p["id"]) % 99999999)
    return {
        "MatchedObjectId": control,
        "MatchedObjectDescriptor": {
            "PositionID": f"SANDBOX-{control[-6:]}",
            "PositionTitle": p["title"],
            "PositionURI": f"https://www.usajobs.gov:443/job/{control}",
            "ApplyURI": [f"https://www.usajobs.gov:443/job/{control}/apply"],
            "PositionLocationDisplay": p["location"],
            "PositionLocation": [
                {
                    "LocationName": p["location"],
                    "CountryCode": "United States",
                    "CityName": p["city"],
                }
            ],
            "OrganizationName": rng.choice(
                (
                    "Department of Veterans Affairs",
                    "Department of Energy",
                    "General Services Administration",
                    "Internal Revenue Service",
                )
            ),
            "DepartmentName": "Sandbox Department",
            "JobCategory": [{"Name": "Information Technology Management", "Code": "2210"}],
            "JobGrade": [{"Code": "GS"}],
            "PositionSchedule": [{"Name": "Full-time", "Code": "1"}],
            "PositionRemuneration": [
                {
                    "MinimumRange": str(p["salary_min"]),
                    "MaximumRange": str(p["salary_max"]),
                    "RateIntervalCode": "PA",
                    "Description": "Per Year",
                }
            ],
            "PublicationStartDate": p["date"],
            "ApplicationCloseDate": p["date"],
            "UserArea": {
                "Details": {
                    "LowGrade": str(grade),
                    "HighGrade": str(grade + 1),
                    "RemoteIndicator": p["remote"],
                    "JobSummary": p["description"][:300],
                }
            },
        },
        "RelevanceRank": 0,
    }


@handles("usajobs", "GET", "/api/search")
def usajobs_search(call: Call):
    keyword = call.text("Keyword") or call.text("PositionTitle")
    where = call.text("LocationName")
    page, items = listing(
        call,
        lambda rng, index: usajobs_item(
            posting(rng, what=keyword, where=where, index=index, country="US"), rng
        ),
        default_size=25,
    )
    return {
        "LanguageCode": "EN",
        "SearchParameters": {},
        "SearchResult": {
            "SearchResultCount": len(items),
            "SearchResultCountAll": page.total,
            "SearchResultItems": items,
            "UserArea": {
                "NumberOfPages": str(-(-page.total // page.size) if page.size else 0),
                "IsRadialSearch": False,
            },
        },
    }


@handles("usajobs", "GET", "/api/historicjoa")
def usajobs_historic(call: Call):
    def make(rng, index):
        p = posting(rng, index=index, country="US")
        control = str(600000000 + int(p["id"]) % 99999999)
        return {
            "usajobsControlNumber": int(control),
            "hiringAgencyCode": call.text("HiringAgencyCodes") or "VA",
            "positionTitle": p["title"],
            "minimumSalary": p["salary_min"],
            "maximumSalary": p["salary_max"],
            "positionOpenDate": p["date"],
            "positionCloseDate": p["date"],
            "positionOpeningStatus": "Job canceled"
            if rng.random() < 0.05
            else "Accepting applications",
        }

    page, data = listing(call, make, default_size=25)
    paging = {
        "metadata": {
            "totalCount": page.total,
            "pageSize": page.size,
            "continuationToken": page.next_cursor,
        },
        "next": None,
    }
    return {"paging": paging, "data": data}


@handles("usajobs", "GET", "/api/codelist/occupationalseries")
def usajobs_series(call: Call):
    series = {
        "0343": "Management And Program Analysis",
        "1102": "Contracting",
        "2210": "Information Technology Management",
        "0801": "General Engineering",
        "1550": "Computer Science",
        "0510": "Accounting",
    }
    return {
        "CodeList": [
            {
                "ValidValue": [
                    {"Code": code, "Value": value, "IsDisabled": "No"}
                    for code, value in series.items()
                ],
                "id": "OccupationalSeries",
            }
        ]
    }


@handles("usajobs", "GET", "/api/codelist/agencysubelements")
def usajobs_agencies(call: Call):
    agencies = {
        "VA": "Department of Veterans Affairs",
        "DN": "Department of Energy",
        "GS": "General Services Administration",
        "TR": "Department of the Treasury",
        "HE": "Department of Health and Human Services",
    }
    return {
        "CodeList": [
            {
                "ValidValue": [
                    {"Code": code, "Value": value, "IsDisabled": "No"}
                    for code, value in agencies.items()
                ],
                "id": "AgencySubElements",
            }
        ]
    }
