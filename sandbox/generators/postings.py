"""Job postings."""

from sandbox.generators.people import company
from sandbox.generators.social import iso, timestamp
from sandbox.generators.words import CITIES, TECHNOLOGIES, paragraph, slugify, title_case

ROLES = (
    "Software Engineer",
    "Backend Developer",
    "Data Engineer",
    "Product Designer",
    "Account Executive",
    "Marketing Manager",
    "DevOps Engineer",
    "Data Scientist",
    "Customer Success Manager",
    "IT Specialist",
)


def posting(rng, *, what: str = "", where: str = "", index: int = 0, country: str = "") -> dict:
    role = title_case(what) if what else rng.choice(ROLES)
    if what and rng.random() < 0.5:
        role = f"{rng.choice(('Senior', 'Junior', 'Lead', 'Staff'))} {role}"
    city, region, country_name, country_code, _ = rng.choice(CITIES)
    if where:
        city = title_case(where)
    if country:
        country_code = country.upper()
    employer = company(rng)
    low = rng.randrange(40_000, 140_000, 5_000)
    high = low + rng.randrange(10_000, 60_000, 5_000)
    seconds = timestamp(rng, index * 5)
    job_id = str(rng.randint(10**9, 10**10))
    return {
        "id": job_id,
        "title": role,
        "company": employer,
        "city": city,
        "region": region,
        "country": country_name,
        "country_code": country_code,
        "location": f"{city}, {country_code}",
        "remote": rng.random() < 0.3,
        "salary_min": low,
        "salary_max": high,
        "currency": "USD" if country_code in ("US", "") else "EUR",
        "contract_type": rng.choice(("permanent", "contract")),
        "contract_time": rng.choice(("full_time", "part_time")),
        "description": paragraph(rng, role, 3),
        "posted_at": iso(seconds),
        "date": iso(seconds)[:10],
        "url": f"https://{employer['domain']}/careers/{slugify(role)}-{job_id[-5:]}",
        "technologies": sorted(rng.sample(TECHNOLOGIES, 3)),
        "seniority": rng.choice(("junior", "mid_level", "senior", "staff")),
    }
