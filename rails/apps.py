from django.apps import AppConfig


class RailsConfig(AppConfig):
    name = "rails"
    verbose_name = "Pay-per-call rails"
