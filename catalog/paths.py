"""Path templates: a catalog path such as "/v1/jobs/{id}", a caller's concrete path matched
against it, and a template filled with values on the way to the provider.

A value is the caller's own (an email, GitHub's "main...dev", an encoded URL) and goes out
percent-encoded, so it can never add a segment; a placeholder marked multi-segment (OpenAPI's
x-reservedExpansion, as Google's resource names "projects/p/locations/l") keeps its slashes.
Whatever could climb out of the provider's base path is refused: "." and ".." segments (also
percent-encoded or behind an encoded slash), empty segments, backslashes and control characters.
"""

import functools
import re
from collections.abc import Callable
from urllib.parse import quote, unquote

from gateway.errors import InvalidRequest

PLACEHOLDER = re.compile(r"{([^{}/]+)}")
# Characters kept as they are when a catalog path becomes part of a URL; "#" and spaces are not.
URL_PATH_SAFE = "/:@!$&'()*+,;=-._~?%{}"


def template_placeholders(template: str) -> list[str]:
    """The placeholder names of a template, in order: "/a/{x}/b/{y}" -> ["x", "y"]."""
    return PLACEHOLDER.findall(template)


def template_literal_length(template: str) -> int:
    """How many characters of a template are not placeholders (more is more specific)."""
    return len(PLACEHOLDER.sub("", template))


def multi_segment_placeholders(path_params: list[dict]) -> frozenset[str]:
    """The path parameters whose values may span several segments."""
    return frozenset(param["name"] for param in path_params if param.get("multiSegment") is True)


@functools.lru_cache(maxsize=4096)
def _template_pattern(
    template: str, multi_segment: frozenset[str]
) -> tuple[re.Pattern, tuple[str, ...]]:
    parts = PLACEHOLDER.split(template)
    names = tuple(parts[1::2])
    pattern = re.escape(parts[0])
    # A value never holds the "?" that starts a query or the "#" of AWS's "#HeadObject"; in a
    # template's own query string ("/orders/listbytag?tagId={tagId}&page={page}"), a value ends
    # at the next "&".
    in_query = "?" in parts[0]
    for name, literal in zip(names, parts[2::2], strict=True):
        if in_query:
            pattern += "([^&#]+)"
        else:
            pattern += "([^?#]+?)" if name in multi_segment else "([^/?#]+)"
        pattern += re.escape(literal)
        in_query = in_query or "?" in literal
    return re.compile(f"^{pattern}$"), names


def template_match(
    template: str, path: str, multi_segment: frozenset[str] = frozenset()
) -> dict[str, str] | None:
    """The placeholder values when ``path`` fits ``template``, else None. A placeholder named in
    ``multi_segment`` takes one or more whole segments ("projects/p/locations/l")."""
    pattern, names = _template_pattern(template, multi_segment)
    match = pattern.match(path)
    if match is None:
        return None
    # A value that is itself a placeholder ("{jobId}") was not given: leave it out.
    return {
        name: value
        for name, value in zip(names, match.groups(), strict=True)
        if not PLACEHOLDER.fullmatch(value)
    }


def template_fill(template: str, text_for: Callable[[str], str]) -> str:
    """The template with each placeholder replaced by ``text_for(name)``, used as it is."""
    return PLACEHOLDER.sub(lambda match: text_for(match.group(1)), template)


def template_fill_values(template: str, values: dict, multi_segment: frozenset[str]) -> str:
    """The provider's path: every placeholder filled with its value, percent-encoded.
    InvalidRequest names the placeholders without a value."""
    missing = [name for name in template_placeholders(template) if name not in values]
    if missing:
        raise InvalidRequest(
            f"Fill the placeholders of {template}: "
            + ", ".join(f"{{{name}}}" for name in missing)
            + " (send a concrete path or pathParams)"
        )
    return template_fill(
        template,
        lambda name: value_encode(name, values[name], multi_segment=name in multi_segment),
    )


def matched_values(matched: dict[str, str]) -> dict[str, str]:
    """Values read from a concrete path as values: it is a URL path, so "Jane%20Doe" and
    "Jane Doe" are one value, encoded once for the provider."""
    return {name: unquote(value) for name, value in matched.items()}


def path_in_url(path: str) -> str:
    """A path (a template or a filled one) as a URL carries it: what a URL path cannot hold as
    it is, such as "#" or a space, escaped."""
    return quote(path, safe=URL_PATH_SAFE)


def caller_path_check(path: str) -> None:
    """Refuse a caller's path that could climb out of the provider's base path or that no
    provider path looks like: a "." or ".." segment (also percent-encoded), an empty segment
    ("//"), a backslash or a control character. Anything else inside a segment ('@' in
    "/emails/jane@example.com", GitHub's "main...dev", an encoded URL) is the segment's own
    value, percent-encoded on the way out."""
    if not path.startswith("/"):
        raise InvalidRequest(f"path {path!r} must start with '/'")
    segments = path.split("?", 1)[0].split("/")[1:]
    if (
        "//" in path
        or "\\" in path
        or _has_control_character(unquote(path))
        or any(_climbs(unquote(segment)) for segment in segments)
    ):
        raise InvalidRequest(
            f"path {path!r} is not allowed: it may not contain '.' or '..' segments, '//', '\\' "
            "or control characters"
        )


def _has_control_character(text: str) -> bool:
    return any(ord(character) < 0x20 or ord(character) == 0x7F for character in text)


def _climbs(value: str) -> bool:
    """Whether a value holds a "." or ".." segment once a server reads its encoded slashes (or
    backslashes) as separators, as some do: "..%2Fadmin" must not reach the provider's root."""
    return any(part in (".", "..") for part in re.split(r"[/\\]", value))


def value_encode(name: str, value, *, multi_segment: bool = False) -> str:
    """A placeholder's value for the provider's path, percent-encoded; a multi-segment one
    keeps its slashes."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidRequest(f"pathParams.{name} must be a string or a number")
    text = str(value)
    if not text or _climbs(text):
        raise InvalidRequest(f"pathParams.{name} may not be empty or hold '.' or '..' segments")
    if multi_segment:
        caller_path_check("/" + text)
        return quote(text, safe="/")
    if _has_control_character(text):
        raise InvalidRequest(f"pathParams.{name} may not contain control characters")
    return quote(text, safe="")
