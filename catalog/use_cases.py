"""Use cases: a need each endpoint answers, written the way a user would type it.

Providers describe operations in their own words ("Retrieve the recipients of an envelope"); a
user asks in theirs ("who still has to sign this document"). An endpoint's use case bridges the
two: search embeds it as a view of its own and indexes its words (docs/search.md). A document
gives it with the operation extension ``x-gateway-use-case``; for the operations of documents
that have none, the gateway ships ``use_cases.tsv``, written for the public OpenAPI directory's
operations and the seed catalog's, each from the operation's record: one line per operation,
``<api slug> <METHOD> <path>``, a tab, the use case.
"""

import functools
from pathlib import Path

from catalog.texts import SPACES, USE_CASE_CHARS

SHEET = Path(__file__).resolve().parent / "use_cases.tsv"


class UseCaseError(ValueError):
    pass


def use_case_clean(value: object) -> str:
    """A use case as stored: one line, spaces collapsed. Raises UseCaseError for anything but
    a non-empty string of at most USE_CASE_CHARS characters."""
    if not isinstance(value, str) or not value.strip():
        raise UseCaseError("must be a non-empty string")
    line = SPACES.sub(" ", value).strip()
    if len(line) > USE_CASE_CHARS:
        raise UseCaseError(f"is longer than {USE_CASE_CHARS} characters")
    return line


def shipped_use_case(api_slug: str, method: str, path: str) -> str:
    """The shipped use case of an operation, or ""."""
    return _sheet().get(f"{api_slug} {method.upper()} {path}", "")


@functools.cache
def _sheet() -> dict[str, str]:
    lines = {}
    with SHEET.open(encoding="utf-8") as sheet:
        for line in sheet:
            key, _, use_case = line.rstrip("\n").partition("\t")
            if use_case:
                lines[key] = use_case
    return lines
