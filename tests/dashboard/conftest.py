"""Dashboard fixtures: browsers signed in as the personas."""

import pytest
from django.test import Client


@pytest.fixture
def browser_for():
    """browser_for(persona) -> a test client signed in as that persona's user."""

    def build(persona) -> Client:
        client = Client()
        client.force_login(persona.user)
        return client

    return build
