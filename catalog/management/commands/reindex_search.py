import time

from django.core.management.base import BaseCommand

from catalog.embeddings import embedding_use_all_cores
from catalog.services import endpoint_embeddings_refresh


class Command(BaseCommand):
    help = (
        "Embed every endpoint's search text again and store the vectors (with a progress bar). "
        "Running processes reload their search index when it finishes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--stale-only",
            action="store_true",
            help="embed only endpoints whose text changed or that have no vector yet",
        )

    def handle(self, *args, stale_only, **options):
        embedding_use_all_cores()
        started = time.monotonic()
        count = endpoint_embeddings_refresh(
            rebuild=not stale_only, progress=options["verbosity"] >= 1
        )
        self.stdout.write(
            self.style.SUCCESS(f"{count} endpoints embedded in {time.monotonic() - started:.1f}s")
        )
