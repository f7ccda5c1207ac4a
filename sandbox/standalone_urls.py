"""The URL conf of the sandbox served on its own (sandbox.settings): the sandbox's routes, then
every other path answered as the sandbox answers an unknown API, a JSON 404. A route rather than
``handler404``, which Django skips under ``DEBUG`` for its HTML page."""

from django.urls import re_path

from sandbox.urls import urlpatterns as sandbox_urlpatterns
from sandbox.views import not_found

urlpatterns = [*sandbox_urlpatterns, re_path(r"", not_found, name="sandbox-not-found")]

handler404 = "sandbox.views.not_found"
handler500 = "sandbox.views.server_error"
