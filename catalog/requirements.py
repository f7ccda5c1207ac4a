"""Requirements that span parameters, which OpenAPI's per-parameter ``required`` cannot say:
"domain or company", "latitude and longitude together", "a cursor needs its query".

A document writes them on an operation as ``x-gateway-requirements``, a list of:

    {anyOf: [domain, company]}                     at least one alternative is sent
    {anyOf: [[first_name, last_name], full_name]}  an alternative may be names sent together
    {oneOf: [url, html]}                           exactly one alternative is sent
    {allOrNone: [latitude, longitude]}             all of them are sent, or none
    {if: cursor, then: [query]}                    sending the first needs every one of the others

Stored and shown as parsed here: anyOf and oneOf alternatives are always lists of names. The
gateway refuses a /v1/run that breaks one before anything is reserved; the sandbox refuses it
as the provider would; snippets fill a set of parameters that keeps them all.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gateway.errors import InvalidRequest

ANY_OF, ONE_OF, ALL_OR_NONE, IF = "anyOf", "oneOf", "allOrNone", "if"
KINDS = (ANY_OF, ONE_OF, ALL_OR_NONE, IF)


class RequirementError(ValueError):
    """A requirement the document writes wrongly; the message says how."""


# --- Reading a document ---------------------------------------------------------------------------


def requirements_parse(value: Any, *, declared: Iterable[str]) -> list[dict]:
    """An ``x-gateway-requirements`` value -> the requirements as stored. Every name must be one
    of the operation's ``declared`` parameters; RequirementError says what is wrong."""
    if not isinstance(value, list):
        raise RequirementError("must be a list of requirements")
    known = set(declared)
    return [_requirement_parse(item, known, position) for position, item in enumerate(value)]


def _requirement_parse(item: Any, known: set[str], position: int) -> dict:
    where = f"requirement {position + 1}"
    if not isinstance(item, dict):
        raise RequirementError(f"{where} must be a mapping with one of: {', '.join(KINDS)}")
    kinds = [kind for kind in KINDS if kind in item]
    allowed = {IF, "then"} if kinds == [IF] else set(kinds)
    if len(kinds) != 1 or set(item) - allowed:
        raise RequirementError(
            f"{where} must have exactly one of {', '.join(KINDS)} (if with then), "
            f"not {', '.join(map(str, item)) or 'nothing'}"
        )
    kind = kinds[0]
    if kind in (ANY_OF, ONE_OF):
        alternatives = item[kind]
        if not isinstance(alternatives, list) or len(alternatives) < 2:
            raise RequirementError(f"{where}: {kind} needs a list of at least two alternatives")
        groups = [_names(alternative, known, where) for alternative in alternatives]
        return {kind: groups}
    if kind == ALL_OR_NONE:
        names = _names(item[kind], known, where)
        if len(names) < 2:
            raise RequirementError(f"{where}: allOrNone needs at least two names")
        return {kind: names}
    if "then" not in item:
        raise RequirementError(f"{where}: if needs then, the parameters it needs")
    trigger = _names(item[IF], known, where)
    needed = _names(item.get("then"), known, where)
    if len(trigger) != 1 or not needed or trigger[0] in needed:
        raise RequirementError(f"{where}: if names one parameter and then the others it needs")
    return {IF: trigger[0], "then": needed}


def _names(value: Any, known: set[str], where: str) -> list[str]:
    """A name or a list of names, each a declared parameter, without repeats."""
    names = value if isinstance(value, list) else [value]
    if not names or not all(isinstance(name, str) and name for name in names):
        raise RequirementError(f"{where}: {value!r} is not a parameter name or a list of them")
    unknown = [name for name in names if name not in known]
    if unknown:
        raise RequirementError(f"{where} names {', '.join(unknown)}, which is not a parameter")
    if len(set(names)) != len(names):
        raise RequirementError(f"{where} names a parameter twice")
    return list(names)


# --- Checking a request ---------------------------------------------------------------------------


def is_sent(value: Any, *, boolean: bool = False) -> bool:
    """Whether a parameter counts as sent. An empty value reaches a provider as nothing, and a
    flag set to false asks for nothing (Apollo's reveal_phone_number needs a webhook_url only
    when true); ``boolean`` reads a query string's "false" and "0" as such a flag."""
    if value is None or value is False or value == "" or value == []:
        return False
    return not (boolean and str(value).lower() in ("false", "0"))


def requirement_problem(
    requirement: Mapping, sent: set[str], label: Callable[[str], str] = str
) -> str | None:
    """What the request, whose ``sent`` parameters are given, lacks to meet the requirement;
    None when it meets it. ``label`` writes a name as the caller sent it ("query.domain")."""
    if ANY_OF in requirement or ONE_OF in requirement:
        kind = ANY_OF if ANY_OF in requirement else ONE_OF
        groups = requirement[kind]
        met = [group for group in groups if sent.issuperset(group)]
        if not met:
            return _alternatives_text(groups, label)
        if kind == ONE_OF and len(met) > 1:
            return f"only one of {_alternatives_text(met, label)}"
        return None
    if ALL_OR_NONE in requirement:
        names = requirement[ALL_OR_NONE]
        missing = [name for name in names if name not in sent]
        if missing and len(missing) < len(names):
            return f"{_and(missing, label)} (with {_and(names, label)}, which go together)"
        return None
    if requirement[IF] in sent:
        missing = [name for name in requirement["then"] if name not in sent]
        if missing:
            return f"{_and(missing, label)} (for {label(requirement[IF])})"
    return None


def requirements_problems(
    requirements: Iterable[Mapping], sent: set[str], label: Callable[[str], str] = str
) -> list[str]:
    problems = (requirement_problem(item, sent, label) for item in requirements)
    return [problem for problem in problems if problem]


def requirement_text(requirement: Mapping) -> str:
    """The requirement in words, for people: "Send domain or company." """
    if ANY_OF in requirement:
        return f"Send {_alternatives_text(requirement[ANY_OF], str)}."
    if ONE_OF in requirement:
        return f"Send exactly one of {_alternatives_text(requirement[ONE_OF], str)}."
    if ALL_OR_NONE in requirement:
        return f"Send {_and(requirement[ALL_OR_NONE], str)} together, or none of them."
    return f"With {requirement[IF]}, send {_and(requirement['then'], str)} too."


def requirements_fill(requirements: Iterable[Mapping], chosen: set[str]) -> set[str]:
    """``chosen`` (the parameters an example sends) grown into a set that meets every
    requirement: an unmet anyOf or oneOf takes its first alternative, and whatever a sent
    parameter goes with or needs is added. A oneOf met twice over is not repaired: examples
    only ever add names."""
    names = set(chosen)
    requirements = list(requirements)
    for _ in range(len(requirements) + 1):
        before = len(names)
        for requirement in requirements:
            if ANY_OF in requirement or ONE_OF in requirement:
                groups = requirement.get(ANY_OF) or requirement[ONE_OF]
                if not any(names.issuperset(group) for group in groups):
                    names.update(groups[0])
            elif ALL_OR_NONE in requirement:
                if names.intersection(requirement[ALL_OR_NONE]):
                    names.update(requirement[ALL_OR_NONE])
            elif requirement[IF] in names:
                names.update(requirement["then"])
        if len(names) == before:
            break
    return names


def requirements_described(requirements: Iterable[Mapping]) -> list[dict]:
    """The requirements as details show them: each with its ``description`` in words."""
    return [
        {**requirement, "description": requirement_text(requirement)}
        for requirement in requirements
    ]


def _and(names: list[str], label: Callable[[str], str]) -> str:
    labelled = [label(name) for name in names]
    if len(labelled) <= 2:
        return " and ".join(labelled)
    return f"{', '.join(labelled[:-1])} and {labelled[-1]}"


def _alternatives_text(groups: list[list[str]], label: Callable[[str], str]) -> str:
    parts = [_and(group, label) for group in groups]
    if any(len(group) > 1 for group in groups):
        return ", or ".join(parts)
    if len(parts) <= 2:
        return " or ".join(parts)
    return f"{', '.join(parts[:-1])} or {parts[-1]}"


# --- A /v1/run request ----------------------------------------------------------------------------


def endpoint_requirements_check(*, endpoint: Any, query: Mapping, body: Any) -> None:
    """Raise InvalidRequest naming what a call of ``endpoint`` lacks to meet its requirements
    (every alternative of an unmet "one of"), before anything is reserved or charged."""
    requirements = endpoint.requirements
    if not requirements:
        return
    where: dict[str, str] = {}
    sent = {param["name"] for param in endpoint.path_params}  # the path always carries them
    located = [("query", param, query) for param in endpoint.query_params]
    if endpoint.takes_body and isinstance(body, Mapping):
        located += [("body", param, body) for param in endpoint.body_params]
    for location, param, values in located:
        name = param["name"]
        where.setdefault(name, location)
        if is_sent(values.get(name), boolean=param.get("type") == "boolean"):
            sent.add(name)
    problems = requirements_problems(
        requirements, sent, lambda name: f"{where[name]}.{name}" if name in where else name
    )
    if problems:
        raise InvalidRequest(f"{endpoint.method} {endpoint.path} needs {'; '.join(problems)}")
