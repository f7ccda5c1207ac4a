from django.urls import path, re_path

from sandbox.views import sandbox_call, sandbox_ping

urlpatterns = [
    path("sandbox/_ping", sandbox_ping, name="sandbox-ping"),
    re_path(r"^sandbox/(?P<slug>[^/]+)(?P<rest>/.*)?$", sandbox_call, name="sandbox"),
]
