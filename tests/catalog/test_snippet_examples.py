"""Example values for required parameters, chosen from a parameter's name when its description
gives none."""

import pytest

from catalog.snippets import example_value


@pytest.mark.parametrize(
    ("name", "example"),
    [
        ("email", "jane@example.com"),
        ("emails", "jane@example.com"),
        ("phone_number", "+15555550100"),
        ("linkedinUrl", "https://example.com"),
        ("hostname", "example.com"),
        ("ip", "192.0.2.1"),
        ("companyId", "123"),
        ("company_number", "123"),
        ("company", "Example Inc"),
        ("firstName", "Jane"),
        ("screen_name", "janedoe"),
        ("name", "Jane Doe"),
        ("country_code", "US"),
        ("search_term", "example"),
    ],
)
def test_a_name_gives_a_value_of_its_kind(name, example):
    assert example_value({"name": name, "type": "string"}) == example


@pytest.mark.parametrize(
    "name", ["jurisdiction_code", "context", "keyboard_layout", "hostile", "zip"]
)
def test_a_name_that_only_contains_a_known_word_gets_the_neutral_value(name):
    # "uri" in jurisdiction, "text" in context, "key" in keyboard, "host" in hostile, "ip" in zip
    assert example_value({"name": name, "type": "string"}) == "example"


def test_the_description_example_default_and_enum_come_before_the_name():
    email = {"name": "email", "type": "string"}
    assert example_value({**email, "example": "ops@acme.test", "default": "x"}) == "ops@acme.test"
    assert example_value({**email, "default": "x"}) == "x"
    assert example_value({**email, "enum": ["a", "b"]}) == "a"
