"""Email-verification APIs: Kickbox, MillionVerifier, NeverBounce, ZeroBounce.

Every verifier reports the same verdict for one address (``sandbox.generators.emails``), each in
its own vocabulary.
"""

import random

from django.core.cache import cache

from sandbox.call import Call, stable_hash
from sandbox.generators.emails import verdict
from sandbox.generators.people import person
from sandbox.handlers.common import listing
from sandbox.handlers.registry import handles
from sandbox.jobs import JOB_TTL_SECONDS, job_decode, job_new, job_peek, job_poll

# --- Kickbox ---------------------------------------------------------------------------------


@handles("kickbox", "GET", "/v2/verify")
def kickbox_verify(call: Call):
    result = verdict(call.text("email"))
    outcome = {"valid": "deliverable", "invalid": "undeliverable", "unknown": "unknown"}.get(
        result.status, "risky"
    )
    return {
        "result": outcome,
        "reason": {"valid": "accepted_email", "invalid": "rejected_email"}.get(
            result.status, "low_deliverability" if result.status == "catch_all" else "timeout"
        ),
        "role": result.role,
        "free": result.free,
        "disposable": result.disposable,
        "accept_all": result.status == "catch_all",
        "did_you_mean": None,
        "sendex": round(result.score / 100, 2),
        "email": result.email,
        "user": result.local,
        "domain": result.domain,
        "success": True,
        "message": None,
    }


# --- MillionVerifier ------------------------------------------------------------------------


@handles("millionverifier", "GET", "/api/v3/")
def millionverifier_verify(call: Call):
    result = verdict(call.text("email"))
    code = {"valid": ("ok", 1), "catch_all": ("catch_all", 2), "unknown": ("unknown", 3)}
    name, number = code.get(
        result.status, ("disposable", 5) if result.disposable else ("invalid", 6)
    )
    return {
        "email": result.email,
        "quality": "good"
        if name == "ok"
        else "risky"
        if name in ("catch_all", "unknown")
        else "bad",
        "result": name,
        "resultcode": number,
        "subresult": result.reason,
        "free": result.free,
        "role": result.role,
        "didyoumean": "",
        "credits": 9120,
        "executiontime": 1,
        "error": "",
        "livemode": False,
    }


@handles("millionverifier", "GET", "/api/v3/credits")
def millionverifier_credits(call: Call):
    return {"credits": 9120, "bulk_credits": 0, "renewing_credits": 0, "plan": 0}


# --- NeverBounce -----------------------------------------------------------------------------

NEVERBOUNCE_CODES = {"valid": 0, "invalid": 1, "disposable": 2, "catch_all": 3, "unknown": 4}


def _neverbounce_result(email: str) -> dict:
    result = verdict(email)
    name = {"catch_all": "catchall"}.get(result.status, result.status)
    flags = ["has_dns", "has_dns_mx"] if result.mx_found else ["bad_syntax"]
    if result.free:
        flags.append("free_email_host")
    if result.role:
        flags.append("role_account")
    return {"result": name, "flags": flags, "suggested_correction": ""}


@handles("neverbounce", "GET", "/v4.2/single/check")
def neverbounce_check(call: Call):
    body = {"status": "success", **_neverbounce_result(call.text("email")), "execution_time": 312}
    if call.get("credits_info"):
        body["credits_info"] = {"paid_credits_used": 1, "paid_credits_remaining": 8999}
    if call.get("address_info"):
        result = verdict(call.text("email"))
        body["address_info"] = {
            "original_email": result.email,
            "normalized_email": result.email,
            "addr": result.local,
            "host": result.domain,
        }
    return body


def _neverbounce_id(job) -> int:
    # NeverBounce job ids are integers: the start second and three digits of the seed, with
    # the full job kept in the cache under that number.
    return job.created * 1000 + job.seed % 1000


@handles("neverbounce", "POST", "/v4.2/jobs/create")
def neverbounce_create(call: Call):
    rows = call.body["input"]
    emails = [str(row.get("email", "")) if isinstance(row, dict) else str(row) for row in rows]
    job = job_new("neverbounce_job", seed=call.seed, count=len(rows), inputs=emails[:1000])
    job_id = _neverbounce_id(job)
    cache.set(f"sandbox:neverbounce:{job_id}", job.hex, JOB_TTL_SECONDS)
    return {"status": "success", "job_id": job_id, "execution_time": 388}


def _neverbounce_job(call: Call, *, count_poll: bool):
    job_id = int(call.get("job_id"))
    job = job_decode(cache.get(f"sandbox:neverbounce:{job_id}") or "")
    if job is None:
        return job_id, None, True
    return job_id, job, job_poll(job) if count_poll else job_peek(job)


@handles("neverbounce", "GET", "/v4.2/jobs/status")
def neverbounce_status(call: Call):
    job_id, job, done = _neverbounce_job(call, count_poll=True)
    total = job.count if job else 100 + job_id % 900
    processed = total if done else total // 3
    emails = (cache.get(f"sandbox:job:{job.hex}:inputs") if job else None) or []
    counts = {"valid": 0, "invalid": 0, "catchall": 0, "disposable": 0, "unknown": 0}
    for email in emails[:processed]:
        counts[_neverbounce_result(email)["result"]] += 1
    if not emails:
        counts["valid"] = processed
    return {
        "status": "success",
        "id": job_id,
        "job_status": "complete" if done else "running",
        "filename": f"sandbox-{job_id}.csv",
        "created_at": "2025-12-01 10:00:00",
        "total": {
            "records": total,
            "billable": total,
            "processed": processed,
            **counts,
            "duplicates": 0,
            "bad_syntax": 0,
        },
        "bounce_estimate": 0.0,
        "percent_complete": 100 if done else 33,
        "execution_time": 22,
    }


@handles("neverbounce", "GET", "/v4.2/jobs/results")
def neverbounce_results(call: Call):
    job_id, job, _done = _neverbounce_job(call, count_poll=False)
    emails = (cache.get(f"sandbox:job:{job.hex}:inputs") if job else None) or []
    total = len(emails) or (job.count if job else 100 + job_id % 900)

    def make(rng, index):
        email = emails[index] if index < len(emails) else person(rng)["email"]
        return {
            "data": {"email": email},
            "verification": {
                "address_info": {"original_email": email},
                **_neverbounce_result(email),
            },
        }

    page, results = listing(call, make, total=total)
    return {
        "status": "success",
        "total_results": page.total,
        "total_pages": -(-page.total // page.size) if page.size else 0,
        "query": {"job_id": job_id, "page": page.number, "items_per_page": page.size},
        "results": results,
        "execution_time": 31,
    }


@handles("neverbounce", "GET", "/v4.2/account/info")
def neverbounce_account(call: Call):
    return {
        "status": "success",
        "billing_type": "default",
        "credits_info": {
            "paid_credits_used": 1000,
            "free_credits_used": 0,
            "paid_credits_remaining": 9000,
            "free_credits_remaining": 0,
        },
        "job_counts": {"completed": 4, "under_review": 0, "queued": 0, "processing": 0},
        "execution_time": 12,
    }


# --- ZeroBounce ------------------------------------------------------------------------------


def zerobounce_result(email: str, ip: str = "") -> dict:
    result = verdict(email)
    status = {"catch_all": "catch-all", "disposable": "do_not_mail"}.get(
        result.status, result.status
    )
    sub = {
        "disposable": "disposable",
        "invalid": "mailbox_not_found",
        "unknown": "timeout_exceeded",
    }
    p = person(random.Random(stable_hash("zerobounce", result.email)), email=result.email)
    return {
        "address": result.email,
        "status": status,
        "sub_status": sub.get(result.status, "role_based" if result.role else ""),
        "free_email": result.free,
        "did_you_mean": None,
        "account": result.local,
        "domain": result.domain,
        "domain_age_days": "9125",
        "smtp_provider": result.smtp_provider,
        "mx_found": "true" if result.mx_found else "false",
        "mx_record": result.mx_record,
        "firstname": p["first_name"],
        "lastname": p["last_name"],
        "gender": None,
        "country": None,
        "region": None,
        "city": None,
        "zipcode": None,
        "processed_at": "2025-12-01 10:00:00.000",
        **({"ip_address": ip} if ip else {}),
    }


@handles("zerobounce", "GET", "/v2/validate")
def zerobounce_validate(call: Call):
    return zerobounce_result(call.text("email"), call.text("ip_address"))


@handles("zerobounce", "POST", "/v2/validatebatch")
def zerobounce_batch(call: Call):
    rows = call.body["email_batch"]
    results = [
        zerobounce_result(str(row.get("email_address", "")), str(row.get("ip_address") or ""))
        for row in rows
        if isinstance(row, dict)
    ]
    return {"email_batch": results, "errors": []}


@handles("zerobounce", "GET", "/v2/guessformat")
def zerobounce_guess(call: Call):
    p = person(
        call.rng(),
        first=call.text("first_name") or None,
        last=call.text("last_name") or None,
        domain=call.text("domain"),
    )
    return {
        "email": p["email"],
        "domain": p["company"]["domain"],
        "format": "first.last",
        "status": "valid",
        "sub_status": "",
        "confidence": "high",
        "did_you_mean": "",
        "failure_reason": "",
        "other_domain_formats": [
            {"format": "first", "confidence": "medium"},
            {"format": "flast", "confidence": "low"},
        ],
    }


@handles("zerobounce", "GET", "/v2/activity")
def zerobounce_activity(call: Call):
    days = call.rng().choice((30, 60, 90, 180, 365, -1))
    return {"found": days != -1, "active_in_days": str(days) if days != -1 else None}


@handles("zerobounce", "GET", "/v2/getcredits")
def zerobounce_credits(call: Call):
    return {"Credits": "8715"}


@handles("zerobounce", "GET", "/v2/getapiusage")
def zerobounce_usage(call: Call):
    rng = call.rng()
    counts = {
        name: rng.randint(0, 500)
        for name in ("valid", "invalid", "catch_all", "do_not_mail", "spamtrap", "unknown")
    }
    return {
        "total": sum(counts.values()),
        "status_valid": counts["valid"],
        "status_invalid": counts["invalid"],
        "status_catch_all": counts["catch_all"],
        "status_do_not_mail": counts["do_not_mail"],
        "status_spamtrap": counts["spamtrap"],
        "status_unknown": counts["unknown"],
        "start_date": call.text("start_date"),
        "end_date": call.text("end_date"),
    }
