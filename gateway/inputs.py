"""How the API reads its inputs: JSON request bodies and query strings."""

import re
from collections.abc import Mapping

from rest_framework import serializers

from gateway.errors import InvalidRequest

# Python's int() and Decimal() also read other scripts' digits (Arabic-Indic "\u0661\u0660")
# and underscores ("1_000"), which no client means as a number and which would reach a
# provider unchanged.
ASCII_INTEGER = re.compile(r"-?[0-9]+")
ASCII_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")
# What the schema says of a string the server trims before it checks it is not blank: it holds
# a character str.strip() keeps (\s, plus the separators \x1c-\x1f and \x85 that Python strips
# and JSON Schema's ECMA regular expressions do not count as space).
NOT_BLANK_PATTERN = r"[^\s\x1c-\x1f\x85]"
# A caller's provider path (catalog.paths.caller_path_check): it starts with "/" and holds no
# "//", backslash, control character, nor "." or ".." segment. Lookaheads rather than a final
# "$", which Python (and so schema-driven test tools) also lets match before a trailing newline.
# Encoded too: a dot segment ("%2e%2e", "..%2F"), a control character ("%0a").
_SEPARATOR = r"(/|%2[fF]|%5[cC])"
_DOT = r"(\.|%2[eE])"
CALLER_PATH_PATTERN = (
    r"^(?![\s\S]*[\\\x00-\x1f\x7f])(?!.*//)(?!.*%([01][0-9a-fA-F]|7[fF]))"
    rf"(?!(.*{_SEPARATOR})?{_DOT}{{1,2}}({_SEPARATOR}|\?|$))/"
)


class RequestBodySerializer(serializers.Serializer):
    """A JSON object whose fields are all declared.

    A field the route does not take is a 400 naming it: a misspelt or misplaced input ("querry",
    "params") would otherwise be dropped, and the call run, and charged, without it.
    """

    default_error_messages = {"invalid": "The request body must be a JSON object, not {datatype}."}

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = [name for name in data if name not in self.fields]
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: f"unknown field; this request takes {known}" for name in unknown}
                )
        return super().to_internal_value(data)


class DigitsIntegerField(serializers.IntegerField):
    """An integer; as text (a query string, a numeric string), ASCII digits only."""

    def to_internal_value(self, data):
        if isinstance(data, str) and not ASCII_INTEGER.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class DigitsDecimalField(serializers.DecimalField):
    """A decimal number; as text, ASCII digits with an optional point and fraction only."""

    def to_internal_value(self, data):
        if isinstance(data, str) and not ASCII_DECIMAL.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class CallerPathField(serializers.CharField):
    """A provider path as a caller gives it; the schema states the rules the server applies."""


def query_string(request) -> dict:
    """A GET route's query string as a plain dict for its serializer. DRF reads a QueryDict as
    form data: a missing boolean as false, and an empty value (`?limit=`) as absent; as a dict,
    a missing field takes its default and an empty one is refused like any other bad value.
    A parameter given twice is refused: which of its values counts would be a guess."""
    repeated = [name for name, values in request.query_params.lists() if len(values) > 1]
    if repeated:
        raise InvalidRequest(
            f"Query parameters given more than once: {', '.join(repeated)}; give each once"
        )
    return request.query_params.dict()
