"""Which function answers which operation.

Provider modules register exact shapes with ``@handles(slug, method, path)``; any operation
without one (a new endpoint added to the seed catalog, say) is answered by the generic handler
its kind calls for (see ``sandbox.handlers.generic``).
"""

from collections.abc import Callable

from sandbox.call import Call

Handler = Callable[[Call], object]
HANDLERS: dict[tuple[str, str, str], Handler] = {}
# Body properties checked by a handler's own schema instead of the catalog's, where the provider
# accepts more than the catalog states (the catalog documents what callers are shown).
BODY_PROPERTIES: dict[tuple[str, str, str], dict] = {}


def handles(slug: str, method: str, template: str, *, body_properties: dict | None = None):
    def register(function: Handler) -> Handler:
        key = (slug, method.upper(), template)
        if key in HANDLERS:
            raise RuntimeError(f"Two sandbox handlers for {key}")
        HANDLERS[key] = function
        if body_properties:
            BODY_PROPERTIES[key] = body_properties
        return function

    return register
