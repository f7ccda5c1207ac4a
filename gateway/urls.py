from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

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
    path(
        "docs",
        SpectacularSwaggerView.as_view(url_name="openapi", **PUBLIC),
        name="docs",
    ),
    path("healthz", HealthzApi.as_view(), name="healthz"),
    path("admin/", admin.site.urls),
    # The built-in sandbox provider: outside /v1, without gateway authentication.
    path("", include("sandbox.urls")),
    path("", include("dashboard.urls")),
    # Last: every other /v1 path answers 404 in the API's error envelope.
    re_path(r"^v1(/.*)?$", UnknownRouteApi.as_view()),
]
