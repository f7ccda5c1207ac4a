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


@pytest.mark.parametrize(
    ("description", "example"),
    [
        (
            "Required. Format: `projects/{project_id}/locations/{location}/queues/{queue_id}`.",
            "projects/my-project/locations/us-central1/queues/my-queue",
        ),
        (
            'The format is "projects/[PROJECT_ID]/groups/[GROUP_ID]".',
            "projects/my-project/groups/my-group",
        ),
        (
            "In the form `contactGroups/`<var>contact_group_id</var>.",
            "contactGroups/my-contact-group",
        ),
        (
            "Example: <code>projects/my-project-123/groups/my-groupid</code>",
            "projects/my-project-123/groups/my-groupid",
        ),
        (
            "The name of the device in the form enterprises/{enterpriseId}/devices/{deviceId}",
            "enterprises/my-enterprise/devices/my-device",
        ),
        (
            "Values are of the form `projects/<project>/instances/<instance>`.",
            "projects/my-project/instances/my-instance",
        ),
        ("The topic, such as `projects/*/topics/*`.", "projects/my-project/topics/my-topic"),
    ],
)
def test_a_resource_name_follows_the_pattern_its_description_gives(description, example):
    param = {"name": "name", "type": "string", "multiSegment": True, "description": description}
    assert example_value(param) == example


def test_a_resource_name_without_a_pattern_is_not_given_a_persons_name():
    resource = {"name": "name", "type": "string", "multiSegment": True}
    assert (
        example_value({**resource, "description": "The name/identifier of the Lien."}) == "example"
    )
    assert example_value({**resource, "description": "See https://cloud.google.com/docs/a/b."}) == (
        "example"
    )
    assert example_value({**resource, "name": "partnerId", "description": "Partner ID."}) == "123"
