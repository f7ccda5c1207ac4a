"""One sandbox request after routing and validation, with its deterministic randomness.

Every answer is drawn from ``random.Random`` instances seeded from a hash of the API slug, the
operation and the declared inputs (never the clock), so the same request always gets the same
answer. ``set_seed`` leaves the paging inputs out: every page of one logical search draws its
items from the same numbered sequence, so pages differ and their union is stable.
"""

import hashlib
import json
import random
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.functional import cached_property

from sandbox.spec import ApiSpec, Operation

# Request parameters that steer the sandbox itself and never take part in an answer.
CONTROL_PARAMS = frozenset(
    {
        "sandbox_fault",
        "sandbox_delay_ms",
        "sandbox_fail_times",
        "sandbox_fault_key",
        "sandbox_retry_after",
        "sandbox_size_mb",
        "sandbox_chunk_delay_ms",
        "sandbox_after_chunks",
    }
)
SIZE_PARAMS = (
    "limit",
    "per_page",
    "size",
    "num",
    "count",
    "max_results",
    "maxResults",
    "results_per_page",
    "ResultsPerPage",
    "page_size",
    "items_per_page",
    "nb_results",
    "numResults",
)


def stable_hash(*parts) -> int:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


@dataclass
class Call:
    api: ApiSpec
    op: Operation
    path: str
    inputs: dict
    body: object
    request: HttpRequest

    @property
    def slug(self) -> str:
        return self.api.slug

    def get(self, name: str, default=None):
        """A declared query or path value, else a top-level body field, else default."""
        if name in self.inputs:
            return self.inputs[name]
        if isinstance(self.body, dict) and self.body.get(name) is not None:
            return self.body[name]
        return default

    def text(self, name: str, default: str = "") -> str:
        value = self.get(name)
        if value is None or value == "":
            return default
        return ", ".join(map(str, value)) if isinstance(value, list) else str(value)

    @cached_property
    def seed(self) -> int:
        return stable_hash(self.slug, self.op.method, self.op.template, self.inputs, self.body)

    @cached_property
    def size_param(self) -> str | None:
        per_result = self.op.per_result
        if per_result and per_result.get("boundParam"):
            return per_result["boundParam"]
        return next((name for name in SIZE_PARAMS if self.op.input_schema(name)), None)

    @cached_property
    def set_seed(self) -> int:
        paging = set(self.op.pagination) | {self.size_param}
        inputs = {name: value for name, value in self.inputs.items() if name not in paging}
        body = self.body
        if isinstance(body, dict):
            body = {name: value for name, value in body.items() if name not in paging}
        return stable_hash(self.slug, self.op.method, self.op.template, inputs, body)

    def rng(self, *salt) -> random.Random:
        return random.Random(stable_hash(self.seed, *salt))

    def item_rng(self, index: int, *salt) -> random.Random:
        """The generator of result number ``index`` of this logical search (any page)."""
        return random.Random(stable_hash(self.set_seed, index, *salt))
