"""Sandbox tests: a client for the sandbox (no key, no database needed) and example inputs
built from the seed documents' schemas."""

import json
from urllib.parse import urlencode

import pytest
from django.test import Client

from catalog.requirements import requirements_fill
from sandbox.spec import Operation


@pytest.fixture
def sandbox():
    return SandboxClient()


class SandboxClient:
    def __init__(self):
        self.client = Client(HTTP_HOST="127.0.0.1", raise_request_exception=True)

    def call(self, slug: str, method: str, path: str, *, query=None, body=None, headers=None):
        url = f"/sandbox/{slug}{path}"
        if query:
            url += "?" + urlencode(query, doseq=True)
        extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in (headers or {}).items()}
        if method == "GET":
            return self.client.get(url, **extra)
        return self.client.generic(
            method,
            url,
            json.dumps(body if body is not None else {}),
            content_type="application/json",
            **extra,
        )


def content_of(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def example_value(schema: dict, name: str = ""):
    """A value of the schema's type, within its bounds (arrays get one item)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        default = schema.get("default")
        return default if isinstance(default, int) else max(schema.get("minimum", 1), 1)
    if kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [example_value(schema.get("items") or {"type": "string"}, name)]
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            key: example_value(properties[key], key)
            for key in schema.get("required") or []
            if key in properties
        }
    lowered = name.lower()
    if "email" in lowered:
        return "jane.doe@example.com"
    if "url" in lowered or lowered in ("profile", "profiles", "urls"):
        return "https://www.linkedin.com/in/jane-doe"
    if "domain" in lowered:
        return "example.com"
    if "date" in lowered:
        return "2025-01-01"
    if lowered == "messages":
        return {"role": "user", "content": "Hello"}
    return "test"


def example_request(operation: Operation) -> tuple[str, dict, object]:
    """(path, query, body) with every required input of the operation filled in, and those its
    requirements that span parameters ask for."""
    body_required = (operation.body_schema or {}).get("required") or []
    required = {param.name for param in operation.params if param.required} | set(body_required)
    chosen = requirements_fill(operation.requirements, required)
    path, query = operation.template, {}
    for param in operation.params:
        value = example_value(param.schema, param.name)
        if param.location == "path":
            path = path.replace("{" + param.name + "}", str(value))
        elif param.name in chosen:
            query[param.name] = value
    body = None
    if operation.body_schema is not None:
        body = example_value({"type": "object", **operation.body_schema})
        properties = operation.body_schema.get("properties") or {}
        for name in sorted(chosen.intersection(properties).difference(body)):
            body[name] = example_value(properties[name], name)
        for name, schema in (operation.body_schema.get("properties") or {}).items():
            if name in body and schema.get("type") == "array":
                item = schema.get("items") or {}
                body[name] = (
                    [example_value(item, name)]
                    if item.get("type") != "object"
                    else [{"role": "user", "content": "Hello"} if name == "messages" else {}]
                )
    return path, query, body
