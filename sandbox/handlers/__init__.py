"""Response shapes, one module per family of providers; importing this package registers them."""

import dataclasses

from sandbox.handlers import (  # noqa: F401
    companies,
    email_finding,
    email_verification,
    jobs_feeds,
    leads,
    llm,
    scraping,
    search,
    social,
)
from sandbox.handlers.generic import generic_handler
from sandbox.handlers.registry import BODY_PROPERTIES, HANDLERS, Handler
from sandbox.spec import ApiSpec, Operation


def handler_for(api: ApiSpec, operation: Operation) -> Handler:
    return HANDLERS.get(operation.key) or generic_handler(api, operation)


def as_handled(operation: Operation) -> Operation:
    """The operation with its body schema as its handler accepts it, for validation."""
    properties = BODY_PROPERTIES.get(operation.key)
    if not properties or operation.body_schema is None:
        return operation
    schema = operation.body_schema
    merged = {**schema, "properties": {**(schema.get("properties") or {}), **properties}}
    return dataclasses.replace(operation, body_schema=merged)
