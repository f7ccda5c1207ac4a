from django.core.management.base import BaseCommand

from credits.services.holds import holds_expire


class Command(BaseCommand):
    help = "Release every pending hold past its deadline (run it every minute from cron)."

    def handle(self, *args, **options):
        self.stdout.write(f"Expired {holds_expire()} holds")
