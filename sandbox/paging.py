"""Pages over a finite, numbered result set.

A logical search has a deterministic total (``default_total``) and its result number ``i`` is
always the same item; a request names a window with the operation's own paging parameters
(page numbers from 0 or 1, item offsets, page offsets, opaque cursors, Crunchbase's last UUID,
Lusha's ``pages`` object). Cursors are base-36 numbers holding the next offset and a check
value tied to the search, so they decode deterministically and a forged one is refused.
"""

import re
from dataclasses import dataclass

from sandbox.call import Call, stable_hash
from sandbox.errors import ProviderError

CHECK = 1 << 20
CURSOR_PARAMS = frozenset(
    {
        "after",
        "after_id",
        "next_token",
        "pagination_token",
        "pageToken",
        "scroll_token",
        "continuationToken",
        "cursor",
    }
)
_FULLNAME = re.compile(r"^t\d_")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def base36(number: int) -> str:
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = DIGITS[digit] + text
        if not number:
            return text


def cursor_token(set_seed: int, offset: int) -> str:
    check = stable_hash(set_seed, "cursor", offset) % CHECK
    # A fixed high digit keeps tokens the same length and opaque-looking.
    return base36((1 << 60) + offset * CHECK + check)


def item_uuid(set_seed: int, index: int) -> str:
    prefix = f"{stable_hash(set_seed, 'uuid'):016x}"
    return f"{prefix[:8]}-{prefix[8:12]}-4{prefix[13:16]}-a{prefix[1:4]}-{index:012x}"


def _cursor_offset(set_seed: int, name: str, token: str) -> int:
    text = _FULLNAME.sub("", token.strip().lower())
    if _UUID.match(text):
        if text.split("-")[0] == item_uuid(set_seed, 0).split("-")[0]:
            return int(text[-12:], 16) + 1
        raise ProviderError(
            400, "invalid_cursor", f"{name} does not belong to this search", parameter=name
        )
    try:
        number = int(text, 36) - (1 << 60)
    except ValueError:
        number = -1
    offset, check = divmod(number, CHECK) if number >= 0 else (-1, -1)
    if offset < 0 or check != stable_hash(set_seed, "cursor", offset) % CHECK:
        raise ProviderError(
            400, "invalid_cursor", f"{name} is not a valid page token", parameter=name
        )
    return offset


def default_total(call: Call) -> int:
    """How many results a logical search has: 120 to 480, so a first page is always full."""
    return 120 + call.set_seed % 361


@dataclass(frozen=True)
class Page:
    offset: int
    size: int
    total: int
    set_seed: int

    @property
    def count(self) -> int:
        return max(0, min(self.size, self.total - self.offset))

    @property
    def indices(self) -> range:
        return range(self.offset, self.offset + self.count)

    @property
    def has_more(self) -> bool:
        return self.offset + self.count < self.total

    @property
    def next_offset(self) -> int:
        return self.offset + self.count

    @property
    def number(self) -> int:
        """1-based page number of this window."""
        return self.offset // self.size + 1 if self.size else 1

    @property
    def next_cursor(self) -> str | None:
        return cursor_token(self.set_seed, self.next_offset) if self.has_more else None


def page_size(call: Call, default: int = 10) -> int:
    name = call.size_param
    value = call.get(name) if name else None
    if value is None and name:
        value = (call.op.input_schema(name) or {}).get("default")
    size = int(value) if value is not None else default
    per_result = call.op.per_result
    if per_result and per_result.get("maxResults"):
        size = min(size, int(per_result["maxResults"]))
    return max(0, size)


def _offset(call: Call, size: int) -> int:
    for name in call.op.pagination:
        value = call.get(name)
        if value is None or value == "":
            continue
        schema = call.op.input_schema(name) or {}
        if name in CURSOR_PARAMS:
            return _cursor_offset(call.set_seed, name, str(value))
        if name == "pages" and isinstance(value, dict):
            page = int(value.get("page") or 0)
            return max(0, page) * size
        number = int(value)
        if name.lower() == "page":
            base = schema.get("minimum", 1) if schema.get("minimum") in (0, 1) else 1
            return max(0, number - base) * size
        if name == "offset" and "page" in (
            call.op.param("offset").description.lower() if call.op.param("offset") else ""
        ):
            return max(0, number) * size
        if name == "start":
            return max(0, number - schema.get("minimum", 0))
        return max(0, number)
    return 0


def page_for(call: Call, *, default_size: int = 10, total: int | None = None, size=None) -> Page:
    if size is None:
        size = page_size(call, default_size)
        pages = call.get("pages")
        if "pages" in call.op.pagination and isinstance(pages, dict) and pages.get("size"):
            size = int(pages["size"])
    return Page(
        offset=_offset(call, size),
        size=size,
        total=default_total(call) if total is None else total,
        set_seed=call.set_seed,
    )
