"""Asynchronous jobs without a database.

A job id is 16 bytes: kind, item count, the seed of its result, its start time and a MAC
(HMAC-SHA256 with SECRET_KEY, 40 bits: enough to tell a sandbox id from a made-up one), shown
as 32 hex digits or as a UUID. The poll endpoint counts polls in Django's cache: the first poll
answers "in progress", the second and later ones the result, so a test sees both without
sleeping. A worker whose cache does not know the job (a per-process cache) goes by the clock
instead: done two seconds after the start.
"""

import hashlib
import hmac
import struct
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

KINDS = (
    "generic",
    "apify_run",
    "apify_dataset",
    "contactout_batch",
    "dropcontact_enrich",
    "firecrawl_crawl",
    "firecrawl_batch",
    "firecrawl_extract",
    "serpapi_search",
    "snov_domain",
    "snov_prospects",
    "snov_domain_emails",
    "snov_email_finder",
    "snov_verification",
    "neverbounce_job",
    "companies_action",
)
JOB_TTL_SECONDS = 6 * 3600
COMPLETE_AFTER_SECONDS = 2
_LAYOUT = struct.Struct(">BHII")  # kind, count, seed, created


@dataclass(frozen=True)
class Job:
    kind: str
    count: int
    seed: int
    created: int

    @property
    def hex(self) -> str:
        body = _LAYOUT.pack(KINDS.index(self.kind), self.count, self.seed, self.created)
        return (body + _mac(body)).hex()

    @property
    def uuid(self) -> str:
        text = self.hex
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _mac(body: bytes) -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), body, hashlib.sha256).digest()[:5]


def job_new(kind: str, *, seed: int, count: int = 0, inputs=None) -> Job:
    job = Job(kind=kind, count=min(count, 0xFFFF), seed=seed % 2**32, created=int(time.time()))
    cache.set(_polls_key(job.hex), 0, JOB_TTL_SECONDS)
    if inputs is not None:
        cache.set(_inputs_key(job.hex), inputs, JOB_TTL_SECONDS)
    return job


def job_decode(text: str) -> Job | None:
    """The job behind an id this sandbox issued (hex or UUID form), else None."""
    try:
        raw = bytes.fromhex(str(text).replace("-", ""))
    except ValueError:
        return None
    if len(raw) != _LAYOUT.size + 5 or not hmac.compare_digest(
        _mac(raw[: _LAYOUT.size]), raw[_LAYOUT.size :]
    ):
        return None
    kind, count, seed, created = _LAYOUT.unpack(raw[: _LAYOUT.size])
    if kind >= len(KINDS):
        return None
    return Job(kind=KINDS[kind], count=count, seed=seed, created=created)


def job_poll(job: Job) -> bool:
    """Count one poll of the job; True once it is complete."""
    try:
        polls = cache.incr(_polls_key(job.hex))
    except ValueError:
        return time.time() - job.created >= COMPLETE_AFTER_SECONDS
    return polls >= 2


def job_peek(job: Job) -> bool:
    """Whether the job is complete, without counting a poll."""
    polls = cache.get(_polls_key(job.hex))
    if polls is None:
        return time.time() - job.created >= COMPLETE_AFTER_SECONDS
    return polls >= 2


def job_inputs(job: Job, default=None):
    return cache.get(_inputs_key(job.hex), default)


def _polls_key(job_id: str) -> str:
    return f"sandbox:job:{job_id}:polls"


def _inputs_key(job_id: str) -> str:
    return f"sandbox:job:{job_id}:inputs"
