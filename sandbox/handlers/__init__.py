"""Response shapes, one module per family of providers; importing this package registers them."""

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
from sandbox.handlers.registry import HANDLERS, Handler
from sandbox.spec import ApiSpec, Operation


def handler_for(api: ApiSpec, operation: Operation) -> Handler:
    return HANDLERS.get(operation.key) or generic_handler(api, operation)
