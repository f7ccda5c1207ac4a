import sys

from django.apps import AppConfig


class RailsConfig(AppConfig):
    name = "rails"
    verbose_name = "Pay-per-call rails"

    def ready(self):
        # py_ecc (under the x402 SDK's EVM signatures) raises the interpreter's recursion limit to
        # 100,000 on import, past what the C stack holds: a deeply nested request body would
        # then crash the process instead of raising RecursionError. Import it first, and put
        # the limit back.
        limit = sys.getrecursionlimit()
        import py_ecc  # noqa: F401

        sys.setrecursionlimit(limit)
