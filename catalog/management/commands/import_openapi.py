import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from catalog.embeddings import embedding_use_all_cores
from catalog.services import ImportSummary, openapi_import
from gateway.errors import InvalidRequest
from gateway.money import usd_to_micros


class Command(BaseCommand):
    help = (
        "Import OpenAPI documents (Swagger 2.0, OpenAPI 3.0 and 3.1; JSON or YAML) into the "
        "catalog from files, directory trees or http(s) URLs. Importing again updates in place."
    )

    def add_arguments(self, parser):
        parser.add_argument("locations", nargs="+", metavar="PATH_OR_URL")
        parser.add_argument("--slug", default="", help="the API's slug (one document only)")
        parser.add_argument(
            "--price-usd",
            default=None,
            help="price per call of operations without x-gateway-price "
            "(default: CATALOG_DEFAULT_PRICE_USD)",
        )
        parser.add_argument(
            "--verify", action="store_true", help="mark the imported APIs and endpoints verified"
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="let a document whose slug comes from its folder or title update an API of that "
            "slug that another document created (refused otherwise)",
        )

    def handle(self, *args, locations, slug, price_usd, verify, replace, **options):
        embedding_use_all_cores()
        price_text = price_usd if price_usd is not None else settings.CATALOG_DEFAULT_PRICE_USD
        try:
            default_price_micros = usd_to_micros(price_text)
        except ValueError as error:
            raise CommandError(f"--price-usd: {error}") from None
        if default_price_micros < 0:
            raise CommandError("--price-usd: a price cannot be negative")
        started = time.monotonic()
        try:
            summary = openapi_import(
                locations=locations,
                slug=slug,
                default_price_micros=default_price_micros,
                verify=verify,
                replace=replace,
            )
        except InvalidRequest as error:
            raise CommandError(error.message) from None
        report_summary(self, summary, seconds=time.monotonic() - started)
        if summary.errors and not summary.documents:
            raise CommandError("nothing was imported")


def report_summary(command: BaseCommand, summary: ImportSummary, *, seconds: float) -> None:
    verbosity = command.verbosity if hasattr(command, "verbosity") else 1
    for report in summary.documents:
        if verbosity >= 2 or (report.warnings and verbosity >= 1 and len(summary.documents) < 20):
            for warning in report.warnings:
                command.stderr.write(f"{report.source}: warning: {warning}")
    for location, message in summary.errors:
        command.stderr.write(command.style.ERROR(f"{location}: {message}"))
    command.stdout.write(command.style.SUCCESS(f"{summary.line} in {seconds:.1f}s"))
