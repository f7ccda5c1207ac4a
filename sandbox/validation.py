"""Checks a request against its operation's schema the way a provider would.

Query strings arrive as text and are coerced by their declared type; JSON bodies are checked
recursively (required properties, types, enums, bounds, ``maxItems`` batch limits). The first
problem found is raised as a ``ProviderError`` naming the parameter.
"""

import json

from catalog.requirements import is_sent, requirement_problem
from sandbox.errors import ProviderError, invalid, missing
from sandbox.spec import Operation, group_name

TRUE = {"true", "1", "yes"}
FALSE = {"false", "0", "no"}


def coerce_query(name: str, raw: list[str], schema: dict):
    kind = schema.get("type")
    if kind == "array":
        values = [part for value in raw for part in value.split(",") if part != ""]
        item_schema = schema.get("items") or {}
        return [coerce_query(name, [value], item_schema) for value in values]
    value = raw[-1]
    if kind == "integer":
        try:
            return int(value)
        except ValueError:
            raise invalid(name, f"{name} must be an integer (got {value!r})") from None
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            raise invalid(name, f"{name} must be a number (got {value!r})") from None
    if kind == "boolean":
        if value.lower() in TRUE:
            return True
        if value.lower() in FALSE:
            return False
        raise invalid(name, f"{name} must be true or false (got {value!r})")
    return value


def _type_ok(value, kind: str | None) -> bool:
    if kind is None:
        return True
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def check_value(name: str, value, schema: dict) -> None:
    """Raise a ProviderError when value does not satisfy schema (one level of oneOf ignored)."""
    kind = schema.get("type")
    if not _type_ok(value, kind):
        article = "an" if kind[0] in "aeiou" else "a"
        raise invalid(name, f"{name} must be {article} {kind}")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(str(option) for option in schema["enum"])
        raise invalid(name, f"{name} must be one of {allowed} (got {value!r})")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise invalid(name, f"{name} must be at least {schema['minimum']} (got {value})")
        if "maximum" in schema and value > schema["maximum"]:
            raise invalid(name, f"{name} must be at most {schema['maximum']} (got {value})")
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        raise invalid(name, f"{name} must be at most {schema['maxLength']} characters long")
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ProviderError(
                400,
                "too_many_items",
                f"{name} may contain at most {schema['maxItems']} items (got {len(value)})",
                parameter=name,
            )
        if "minItems" in schema and len(value) < schema["minItems"]:
            raise invalid(name, f"{name} must contain at least {schema['minItems']} item(s)")
        item_schema = schema.get("items") or {}
        for index, item in enumerate(value):
            check_value(f"{name}[{index}]", item, item_schema)
    if isinstance(value, dict):
        check_object(value, schema, prefix=f"{name}.")


def check_object(value: dict, schema: dict, *, prefix: str = "") -> None:
    for required in schema.get("required") or []:
        if value.get(required) in (None, ""):
            raise missing(f"{prefix}{required}")
    for name, property_schema in (schema.get("properties") or {}).items():
        if name in value and value[name] is not None:
            check_value(f"{prefix}{name}", value[name], property_schema)


def parse_json_body(raw: bytes):
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ProviderError(400, "invalid_json", "The request body is not valid JSON") from None


def validated_inputs(operation: Operation, query, path_params: dict, body) -> tuple[dict, object]:
    """(typed query and path values by name, checked body) or a ProviderError."""
    values: dict = {}
    for param in operation.params:
        if param.location == "path":
            raw = [path_params.get(group_name(param.name), "")]
        else:
            raw = query.getlist(param.name)
        if not raw or raw == [""]:
            if param.required:
                raise missing(param.name)
            continue
        value = coerce_query(param.name, raw, param.schema)
        check_value(param.name, value, {k: v for k, v in param.schema.items() if k != "type"})
        values[param.name] = value
    schema = operation.body_schema
    if schema is not None and operation.method in ("POST", "PUT", "PATCH"):
        if body is None:
            body = {} if schema.get("type", "object") == "object" else None
        if schema.get("type", "object") == "object":
            if not isinstance(body, dict):
                raise ProviderError(400, "invalid_body", "The request body must be a JSON object")
            check_object(body, schema)
    _requirements_check(operation, values, body)
    return values, body


def _requirements_check(operation: Operation, values: dict, body) -> None:
    """The rules that span parameters ("domain or company"), refused as the provider would."""
    if not operation.requirements:
        return
    sent = {name for name, value in values.items() if is_sent(value)}
    if isinstance(body, dict):
        sent.update(name for name, value in body.items() if is_sent(value))
    for requirement in operation.requirements:
        problem = requirement_problem(requirement, sent)
        if problem is None:
            continue
        if problem.startswith("only one of"):
            raise invalid(_first_name(requirement), f"Send {problem}")
        raise ProviderError(
            400,
            "missing_parameter",
            f"{problem} is required",
            parameter=_first_name(requirement),
        )


def _first_name(requirement: dict) -> str:
    """The parameter an error names: the first the requirement asks for."""
    for kind in ("anyOf", "oneOf"):
        if kind in requirement:
            return requirement[kind][0][0]
    if "allOrNone" in requirement:
        return requirement["allOrNone"][0]
    return requirement["then"][0]
