import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "gateway.settings")

application = get_wsgi_application()

# Load the search model and build the search index now, not on the first request: with
# gunicorn --preload this runs once in the master and the workers share the model's memory.
from catalog.search import search_warm_up  # noqa: E402

search_warm_up()
