"""People and companies: the neutral records that provider shapes are built from."""

import hashlib

from sandbox.generators.words import (
    CITIES,
    COMPANY_PREFIXES,
    COMPANY_SUFFIXES,
    FIRST_NAMES,
    INDUSTRIES,
    LAST_NAMES,
    LEGAL_FORMS,
    SCHOOLS,
    SKILLS,
    TECHNOLOGIES,
    TITLES,
    clean_domain,
    domain_label,
    paragraph,
    slugify,
    title_case,
)

STREETS = ("Market", "Main", "King", "Harbour")
EMPLOYEE_RANGES = ((1, 10), (11, 50), (51, 200), (201, 500), (501, 1000), (1001, 5000))


def short_id(*parts, length: int = 24) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:length]


def phone_number(rng, prefix: str = "+1 415") -> str:
    if prefix.startswith("+1 "):
        # 555-01xx numbers are reserved for fiction in North America.
        return f"{prefix}-555-01{rng.randint(0, 99):02d}"
    return f"{prefix} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"


def company(rng, *, domain: str | None = None, name: str | None = None) -> dict:
    if domain:
        domain = clean_domain(domain)
        name = name or title_case(domain_label(domain).replace("-", " "))
    elif name:
        domain = slugify(name).replace("-", "") + ".com"
    else:
        name = f"{rng.choice(COMPANY_PREFIXES)} {rng.choice(COMPANY_SUFFIXES)}"
        domain = slugify(name).replace("-", "") + rng.choice((".com", ".io", ".ai", ".co"))
    city, region, country, country_code, dial = rng.choice(CITIES)
    low, high = rng.choice(EMPLOYEE_RANGES)
    employees = rng.randint(low, high)
    founded = rng.randint(1985, 2022)
    funding = rng.choice((0, 2_500_000, 12_000_000, 45_000_000, 180_000_000))
    handle = slugify(name)
    return {
        "id": short_id("company", domain),
        "name": name,
        "legal_name": f"{name} {rng.choice(LEGAL_FORMS)}",
        "domain": domain,
        "website": f"https://{domain}",
        "description": f"{name} builds {rng.choice(INDUSTRIES)} products. "
        + paragraph(rng, name, 2),
        "industry": rng.choice(INDUSTRIES),
        "employees": employees,
        "employee_range": f"{low}-{high}",
        "founded_year": founded,
        "city": city,
        "region": region,
        "country": country,
        "country_code": country_code,
        "street": f"{rng.randint(1, 400)} {rng.choice(STREETS)} Street",
        "postal_code": f"{rng.randint(10000, 99999)}",
        "phone": phone_number(rng, dial),
        "annual_revenue": employees * rng.randint(80_000, 250_000),
        "funding_total": funding,
        "last_funding_type": rng.choice(("seed", "series_a", "series_b", "series_c", "ipo"))
        if funding
        else None,
        "technologies": sorted(rng.sample(TECHNOLOGIES, 5)),
        "keywords": sorted(rng.sample(SKILLS, 3)),
        "linkedin_url": f"https://www.linkedin.com/company/{handle}",
        "twitter_url": f"https://twitter.com/{handle.replace('-', '')}",
        "facebook_url": f"https://www.facebook.com/{handle.replace('-', '')}",
        "logo_url": f"https://logo.clearbit.com/{domain}",
        "ticker": None,
    }


def email_for(first: str, last: str, domain: str, pattern: str = "{first}.{last}") -> str:
    local = pattern.format(first=first.lower(), last=last.lower(), f=first[:1].lower())
    return f"{slugify(local).replace('-', '.')}@{domain}"


def person(
    rng,
    *,
    first: str | None = None,
    last: str | None = None,
    full_name: str | None = None,
    domain: str | None = None,
    company_name: str | None = None,
    title: str | None = None,
    email: str | None = None,
    linkedin_url: str | None = None,
) -> dict:
    if full_name and not (first or last):
        parts = full_name.split()
        first, last = parts[0], " ".join(parts[1:]) or rng.choice(LAST_NAMES)
    if email and not domain and "@" in email:
        domain = email.split("@", 1)[1]
    if email and not (first or last) and "@" in email:
        local = email.split("@", 1)[0].replace("_", ".").split(".")
        if len(local) >= 2 and all(part.isalpha() for part in local[:2]):
            first, last = local[0].capitalize(), local[1].capitalize()
    first = first or rng.choice(FIRST_NAMES)
    last = last or rng.choice(LAST_NAMES)
    employer = company(rng, domain=domain, name=company_name)
    role, seniority, department = rng.choice(TITLES)
    city, region, country, country_code, dial = rng.choice(CITIES)
    handle = (
        f"{slugify(first)}-{slugify(last)}-{short_id(first, last, employer['domain'], length=6)}"
    )
    email = email or email_for(first, last, employer["domain"])
    start_year = rng.randint(2012, 2023)
    previous = company(rng)
    return {
        "id": short_id("person", first, last, employer["domain"]),
        "first_name": first,
        "last_name": last,
        "full_name": f"{first} {last}",
        "title": title or role,
        "seniority": seniority,
        "department": department,
        "email": email,
        "email_status": "verified" if rng.random() < 0.85 else "unverified",
        "personal_email": f"{slugify(first)}.{slugify(last)}{rng.randint(1, 99)}@gmail.com",
        "phone": phone_number(rng, dial),
        "mobile_phone": phone_number(rng, dial),
        "linkedin_url": linkedin_url or f"https://www.linkedin.com/in/{handle}",
        "linkedin_username": handle,
        "twitter_url": f"https://twitter.com/{slugify(first)}{slugify(last)}",
        "city": city,
        "region": region,
        "country": country,
        "country_code": country_code,
        "location": f"{city}, {region}, {country}",
        "headline": f"{title or role} at {employer['name']}",
        "skills": sorted(rng.sample(SKILLS, 4)),
        "school": rng.choice(SCHOOLS),
        "company": employer,
        "job_start": f"{start_year}-{rng.randint(1, 12):02d}-01",
        "previous_company": previous,
        "previous_title": rng.choice(TITLES)[0],
        "previous_start": f"{start_year - rng.randint(2, 6)}-{rng.randint(1, 12):02d}-01",
        "confidence": rng.randint(70, 99),
    }
