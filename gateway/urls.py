from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerSplitView

from gateway.apis import HealthzApi, UnknownRouteApi, WhoAmIApi

PUBLIC = {"authentication_classes": [], "permission_classes": [], "throttle_classes": []}

api_v1 = [
    path("v1/whoami", WhoAmIApi.as_view(), name="whoami"),
    path("", include("calls.urls")),
    path("", include("credits.urls")),
    path("", include("catalog.urls")),
]

urlpatterns = [
    *api_v1,
    path(
        "v1/openapi.json",
        SpectacularJSONAPIView.as_view(**PUBLIC),
        name="openapi",
    ),
    # Swagger UI with its set-up script served from /docs?script rather than inline, and its
    # page's style from a static file: the Content-Security-Policy allows nothing inline.
    path(
        "docs",
        SpectacularSwaggerSplitView.as_view(
            url_name="openapi", template_name="gateway/swagger_ui.html", **PUBLIC
        ),
        name="docs",
    ),
    path("healthz", HealthzApi.as_view(), name="healthz"),
    path("admin/", admin.site.urls),
    # The pay-per-call rails: under their own addresses, without gateway authentication.
    path("", include("rails.urls")),
    # The built-in sandbox provider: outside /v1, without gateway authentication.
    path("", include("sandbox.urls")),
    # The tool server (MCP_URL) and the skill file for agents.
    path("", include("agents.urls")),
    path("", include("dashboard.urls")),
    # Last: every other /v1 path answers 404 in the API's error envelope.
    re_path(r"^v1(/.*)?$", UnknownRouteApi.as_view()),
]

# Outside /v1: a page for people, the API's envelope for a client asking for JSON.
handler400 = "dashboard.errors.bad_request"
handler403 = "dashboard.errors.permission_denied"
handler404 = "dashboard.errors.page_not_found"
handler500 = "dashboard.errors.server_error"
