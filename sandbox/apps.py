from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "sandbox"
    verbose_name = "Sandbox provider"

    def ready(self):
        # Parse the seed documents once at start-up rather than on the first sandbox request.
        from sandbox.spec import catalog

        catalog()
