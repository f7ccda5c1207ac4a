"""Use cases: needs each endpoint answers, written the way users would type them.

Providers describe operations in their own words ("Retrieve the recipients of an envelope"); a
user asks in theirs ("who still has to sign this document"). An endpoint's use cases bridge the
two: search embeds them as a view of their own and indexes their words (docs/search.md). Up to
USE_CASES_MAX of them, worded differently (the task, the goal behind it, a question it settles,
the effect in a newcomer's words), reach needs that one wording misses. A document gives them
with the operation extension ``x-gateway-use-case`` (one string, or a list of strings); for the
operations of documents that have none, the gateway ships ``use_cases.tsv``, written for the
public OpenAPI directory's operations and the seed catalog's, each from the operation's record:
one line per operation, ``<api slug> <METHOD> <path>``, then each use case after a tab.

An endpoint keeps its use cases in one text field, one per line (``Endpoint.use_cases``).
"""

import functools
from pathlib import Path

from catalog.texts import SPACES, USE_CASE_CHARS, USE_CASES_MAX

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


def use_cases_clean(value: object) -> tuple[str, ...]:
    """The use cases of one string or a list of strings, each cleaned by use_case_clean, the
    repeated ones dropped. Raises UseCaseError naming the item at fault, or when the list is
    empty or holds more than USE_CASES_MAX."""
    if isinstance(value, str):
        return (use_case_clean(value),)
    if not isinstance(value, list) or not value:
        raise UseCaseError("must be a non-empty string or a list of them")
    if len(value) > USE_CASES_MAX:
        raise UseCaseError(f"holds {len(value)} use cases, at most {USE_CASES_MAX}")
    cleaned = []
    for number, item in enumerate(value, start=1):
        try:
            cleaned.append(use_case_clean(item))
        except UseCaseError as error:
            raise UseCaseError(f"item {number} {error}") from None
    return tuple(dict.fromkeys(cleaned))


def use_cases_join(use_cases: tuple[str, ...] | list[str]) -> str:
    """How Endpoint.use_cases keeps them: one per line."""
    return "\n".join(use_cases)


def use_cases_of(text: str) -> tuple[str, ...]:
    """The use cases Endpoint.use_cases keeps, one per line."""
    return tuple(line for line in text.splitlines() if line.strip())


def shipped_use_cases(api_slug: str, method: str, path: str) -> tuple[str, ...]:
    """The shipped use cases of an operation, or ()."""
    return _sheet().get(f"{api_slug} {method.upper()} {path}", ())


@functools.cache
def _sheet() -> dict[str, tuple[str, ...]]:
    lines = {}
    with SHEET.open(encoding="utf-8") as sheet:
        for line in sheet:
            key, *use_cases = line.rstrip("\n").split("\t")
            use_cases = tuple(use_case for use_case in use_cases if use_case)
            if use_cases:
                lines[key] = use_cases
    return lines
