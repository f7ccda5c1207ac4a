"""The JSON parser of every API view."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# Far beyond any payload a provider takes. The gateway's own handling of a body (validation,
# fingerprints, encoding it for the provider) is recursive, and past Python's recursion limit the
# parser itself fails.
MAX_JSON_DEPTH = 64
TOO_DEEP = f"the body nests objects and arrays deeper than {MAX_JSON_DEPTH} levels"


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing bodies nested deeper than MAX_JSON_DEPTH."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        if json_depth_exceeds(data, MAX_JSON_DEPTH):
            raise ParseError(TOO_DEEP)
        return data


def json_depth_exceeds(value, limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels deep in ``value``.

    Walked a level at a time, so each step is a list comprehension rather than a Python-level
    push and pop per item: a megabyte of JSON takes about as long as parsing it."""
    level, depth = [value], 0
    while True:
        containers = [item for item in level if isinstance(item, dict | list)]
        if not containers:
            return False
        depth += 1
        if depth > limit:
            return True
        level = [
            child
            for item in containers
            for child in (item.values() if isinstance(item, dict) else item)
        ]
