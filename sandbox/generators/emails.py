"""Email verification verdicts.

The verdict depends only on the address, so every verifier agrees about one address, and a few
conventions let tests ask for a verdict: a local part containing ``invalid`` or ``bounce`` is
undeliverable, ``catchall`` or a ``catchall`` domain is accept-all, ``unknown`` is unknown, a
disposable domain (mailinator.com...) is disposable. Other addresses are mostly valid.
"""

import random
from dataclasses import dataclass

from sandbox.call import stable_hash
from sandbox.generators.words import DISPOSABLE_MAIL, FREE_MAIL, ROLE_LOCALS


@dataclass(frozen=True)
class Verdict:
    email: str
    status: str  # valid | invalid | catch_all | unknown | disposable
    reason: str
    score: int
    free: bool
    role: bool
    disposable: bool
    mx_found: bool
    mx_record: str
    smtp_provider: str
    local: str
    domain: str
    syntax_ok: bool


def verdict(email: str) -> Verdict:
    email = (email or "").strip().lower()
    local, _, domain = email.partition("@")
    syntax_ok = bool(local and "." in domain and " " not in email)
    rng = random.Random(stable_hash("verdict", email))
    disposable = domain in DISPOSABLE_MAIL
    if not syntax_ok:
        status, reason = "invalid", "invalid_syntax"
    elif disposable:
        status, reason = "disposable", "disposable_domain"
    elif "invalid" in local or "bounce" in local:
        status, reason = "invalid", "mailbox_not_found"
    elif "catchall" in local or domain.startswith("catchall"):
        status, reason = "catch_all", "accept_all"
    elif "unknown" in local:
        status, reason = "unknown", "smtp_timeout"
    else:
        roll = rng.random()
        status, reason = (
            ("valid", "accepted_email")
            if roll < 0.82 or domain in FREE_MAIL
            else ("catch_all", "accept_all")
            if roll < 0.92
            else ("unknown", "smtp_timeout")
        )
    score = {"valid": 90, "catch_all": 60, "unknown": 40, "disposable": 10, "invalid": 0}[status]
    score = max(0, min(100, score + rng.randint(-8, 8))) if status != "invalid" else 0
    provider = "google" if rng.random() < 0.5 else "microsoft"
    return Verdict(
        email=email,
        status=status,
        reason=reason,
        score=score,
        free=domain in FREE_MAIL,
        role=local in ROLE_LOCALS,
        disposable=disposable,
        mx_found=syntax_ok,
        mx_record="aspmx.l.google.com"
        if provider == "google"
        else f"{domain.replace('.', '-')}.mail.protection.outlook.com",
        smtp_provider=provider,
        local=local,
        domain=domain,
        syntax_ok=syntax_ok,
    )
