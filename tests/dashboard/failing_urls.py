"""The gateway's URLs plus one page that fails, for the error-page tests."""

from django.urls import path

from gateway.urls import handler400, handler403, handler404, handler500, urlpatterns

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]


def _fails(request):
    raise RuntimeError("a failure the person must not see")


urlpatterns = [path("fails", _fails), *urlpatterns]
