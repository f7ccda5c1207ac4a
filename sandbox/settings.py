"""Settings for serving the sandbox provider on its own (``gunicorn sandbox.wsgi``).

The gateway serves the sandbox under ``/sandbox/`` itself; this is the same provider, at the
same paths, without the gateway around it: no other apps, no search model, and only the
middleware that shapes an answer (CommonMiddleware sets Content-Length, as in the gateway). The
benchmarks run it as their upstream, so that the provider's own work weighs as little as
possible on the machine that measures the gateway. It reads the gateway's environment (cache,
``SECRET_KEY`` for job ids, ``ALLOWED_HOSTS``) and never touches the database.
"""

from gateway.settings import *  # noqa: F403

INSTALLED_APPS = ["sandbox"]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "sandbox.standalone_urls"
