"""The error pages of everything outside /v1 (gateway/urls.py names them as Django's handlers):
the API's JSON envelope for a client that asks for JSON, a page for people otherwise. Under /v1
the envelope is always the answer (gateway.middleware and gateway.errors see to it).
"""

from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.shortcuts import render
from django.template.loader import render_to_string

from gateway.errors import (
    ApiError,
    Forbidden,
    InternalError,
    InvalidRequest,
    NotFound,
    error_response,
)
from gateway.middleware import is_api_path


def _wants_json(request: HttpRequest) -> bool:
    if is_api_path(request.path):
        return True
    accept = request.headers.get("Accept", "")
    return "json" in accept and "html" not in accept


def _page(request: HttpRequest, error: ApiError, template: str, context: dict) -> HttpResponse:
    if _wants_json(request):
        return error_response(error)
    return render(request, template, context, status=error.status_code)


def bad_request(request: HttpRequest, exception=None) -> HttpResponse:
    return _page(request, InvalidRequest("Bad request"), "dashboard/400.html", {})


def permission_denied(request: HttpRequest, exception=None) -> HttpResponse:
    message = str(exception or "") or "You may not do that."
    return _page(request, Forbidden(message), "403.html", {"exception": message})


def page_not_found(request: HttpRequest, exception=None) -> HttpResponse:
    return _page(request, NotFound(f"Nothing at {request.path}"), "404.html", {})


def server_error(request: HttpRequest) -> HttpResponse:
    """Rendered without the request's context: the failure may be the database's, which the
    navigation and the signed-in user would query again."""
    if _wants_json(request):
        return error_response(InternalError())
    return HttpResponseServerError(render_to_string("dashboard/500.html"))
