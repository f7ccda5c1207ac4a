from django.urls import path, re_path

from sandbox.views import sandbox_call, sandbox_ping

urlpatterns = [
    path("sandbox/_ping", sandbox_ping, name="sandbox-ping"),
    re_path(r"^sandbox/(?P<slug>[^/]+)(?P<rest>/.*)?$", sandbox_call, name="sandbox"),
]

# Read only when the sandbox is served on its own (ROOT_URLCONF = sandbox.urls).
handler404 = "sandbox.views.not_found"
handler500 = "sandbox.views.server_error"
