"""How an endpoint describes itself in lists of endpoints (search results, list-endpoints).

Providers write their documentation in HTML or markdown, and some descriptions run to pages. A
list shows one plain brief per endpoint: its summary, else its description, without markup, cut
after whole sentences. POST /v1/details gives the description as the provider wrote it.
Also the words of an identifier, which search and the snippets' example values read.
"""

import html
import re

BRIEF_CHARS = 300
# The longest use case an endpoint keeps, and how many it keeps (catalog.use_cases).
USE_CASE_CHARS = 200
USE_CASES_MAX = 4

_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)\s]*\)")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# A paragraph that is nothing but an address (S3's "<p>http://docs.../RESTObjectPUT.html</p>")
# points to a manual; a plain brief leaves it out. An address inside a sentence stays.
_ADDRESS_PARAGRAPH = re.compile(r"<p>\s*https?://[^\s<]*\s*</p>", re.IGNORECASE)
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?)])")
# Shared with catalog.search, which builds the texts it embeds with them.
SPACES = re.compile(r"\s+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_CAMEL_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")
# Anything the cleaning below would change, besides leading and trailing spaces.
_NEEDS_CLEANING = re.compile(r"[<\[&`]|[^\S ]|  | [.,;:!?)]")


def endpoint_brief(summary: str, description: str) -> str:
    """The summary, else the description, as one line of plain text of at most BRIEF_CHARS
    characters; a cut brief ends with " …"."""
    return text_brief(endpoint_brief_source(summary, description))


def endpoint_brief_source(summary: str, description: str) -> str:
    """What a brief is made from: the summary, else the description, as written. The search
    index keeps this and makes briefs only for the endpoints an answer shows."""
    return (summary or "").strip() or (description or "")


def text_brief(text: str) -> str:
    """``text`` as one line of plain text of at most BRIEF_CHARS characters."""
    if len(text) <= BRIEF_CHARS and not _NEEDS_CLEANING.search(text):
        return text.strip()  # most summaries: a 13k-endpoint list page spends 30 ms less
    text = _MARKDOWN_LINK.sub(r"\1", _ADDRESS_PARAGRAPH.sub(" ", text))
    text = html.unescape(_TAG.sub(" ", text)).replace("`", "")
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", SPACES.sub(" ", text)).strip()
    if len(text) <= BRIEF_CHARS:
        return text
    return _cut(text, BRIEF_CHARS - 2) + " …"


def _cut(text: str, limit: int) -> str:
    """The whole sentences of ``text`` that fit in ``limit`` characters, else its whole words."""
    kept = ""
    for sentence in SENTENCE_END.split(text):
        if len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    if kept:
        return kept
    words = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return words.rstrip(" ,;:")


def split_identifier(text: str) -> list[str]:
    """ "getV3ProjectsIdMergeRequests" -> get v3 projects id merge requests; also splits on any
    punctuation ("Microsoft.Compute/virtualMachines" -> microsoft compute virtual machines)."""
    text = _CAMEL_ACRONYM.sub(r"\1 \2", _CAMEL_LOWER_UPPER.sub(r"\1 \2", text or ""))
    return [word.lower() for word in _NON_WORD.split(text) if word]
