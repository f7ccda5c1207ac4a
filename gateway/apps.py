from django.apps import AppConfig


class GatewayConfig(AppConfig):
    name = "gateway"
    verbose_name = "Gateway: people, organizations and API keys"

    def ready(self):
        from gateway import auth  # noqa: F401  registers the OpenAPI bearer scheme
