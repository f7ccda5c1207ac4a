from django.apps import AppConfig


class CreditsConfig(AppConfig):
    name = "credits"
    verbose_name = "Credits: accounts, ledger and holds"
