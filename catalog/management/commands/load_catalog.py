import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog.embeddings import embedding_use_all_cores
from catalog.management.commands.import_openapi import report_summary
from catalog.services import openapi_import
from gateway.money import usd_to_micros

PROVIDERS_DIR = Path(settings.BASE_DIR) / "catalog" / "providers"


class Command(BaseCommand):
    help = (
        "Load every OpenAPI document under catalog/providers/ (or --dir) with the importer. "
        "Nothing to load is not an error; a broken document is reported and the others load."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dir", default=str(PROVIDERS_DIR), help="the documents' directory")
        parser.add_argument(
            "--strict", action="store_true", help="exit non-zero when a document fails to load"
        )

    def handle(self, *args, dir, strict, **options):
        embedding_use_all_cores()
        directory = Path(dir)
        if not directory.is_dir():
            self.stdout.write(f"No provider documents to load ({directory} does not exist)")
            return
        started = time.monotonic()
        summary = openapi_import(
            locations=[str(directory)],
            default_price_micros=usd_to_micros(settings.CATALOG_DEFAULT_PRICE_USD),
        )
        if not summary.documents and not summary.errors:
            self.stdout.write(f"No provider documents to load in {directory}")
            return
        report_summary(self, summary, seconds=time.monotonic() - started)
        if summary.errors and strict:
            raise CommandError(f"{len(summary.errors)} provider documents failed to load")
