"""Helpers the response shapes share."""

from dataclasses import dataclass, field

from django.http import HttpResponse

from sandbox.call import Call
from sandbox.errors import ProviderError
from sandbox.jobs import Job, job_decode, job_poll
from sandbox.paging import Page, page_for


@dataclass
class Reply:
    """A JSON answer with a status other than 200 or extra headers."""

    body: object
    status: int = 200
    headers: dict = field(default_factory=dict)


def binary(content: bytes, content_type: str, status: int = 200) -> HttpResponse:
    return HttpResponse(content, content_type=content_type, status=status)


def set_path(target: dict, dotted: str, value) -> dict:
    """Put value at a dotted path (``data.emails``) of target, creating objects on the way."""
    parts = dotted.split(".")
    current = target
    for part in parts[:-1]:
        current = current.setdefault(part, {})
    current[parts[-1]] = value
    return target


def listing(call: Call, make, *, default_size: int = 10, total: int | None = None, size=None):
    """(page, items): the window of this logical search the request asks for, each item built
    by ``make(rng, index)`` from the item's own seeded generator."""
    page = page_for(call, default_size=default_size, total=total, size=size)
    return page, [make(call.item_rng(index), index) for index in page.indices]


def first_text(call: Call, *names: str, default: str = "") -> str:
    for name in names:
        value = call.text(name)
        if value:
            return value
    return default


def job_for(call: Call, name: str) -> tuple[Job | None, bool]:
    """(the job named by parameter ``name``, whether it is complete), counting one poll.

    An id this sandbox did not issue is answered as a finished job, so a poll with an id from
    elsewhere still gets a plausible result instead of an error.
    """
    job = job_decode(call.text(name))
    if job is None:
        return None, True
    return job, job_poll(job)


def not_found(what: str) -> ProviderError:
    return ProviderError(404, "not_found", f"{what} not found")


__all__ = ["Page", "Reply", "binary", "first_text", "job_for", "listing", "set_path"]
