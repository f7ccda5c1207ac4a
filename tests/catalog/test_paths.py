import pytest

from catalog.paths import (
    caller_path_check,
    template_fill_values,
    template_match,
    value_encode,
)
from gateway.errors import InvalidRequest


def test_a_concrete_path_gives_its_placeholders_values():
    assert template_match("/v1/jobs/{id}", "/v1/jobs/abc") == {"id": "abc"}
    assert template_match("/v1/jobs/{id}", "/v1/jobs/abc/logs") is None
    assert template_match("/v1/jobs/{id}", "/v1/jobs/{id}") == {}


def test_a_multi_segment_placeholder_takes_whole_segments():
    template = "/v1/{name}:publish"
    assert template_match(template, "/v1/projects/p/topics/t:publish") is None
    assert template_match(template, "/v1/projects/p/topics/t:publish", frozenset({"name"})) == {
        "name": "projects/p/topics/t"
    }


def test_a_value_in_a_templates_query_string_ends_at_the_next_parameter():
    template = "/orders/listbytag?tagId={tagId}&page={page}"
    assert template_match(template, "/orders/listbytag?tagId=7&page=2") == {
        "tagId": "7",
        "page": "2",
    }


def test_a_template_is_filled_with_encoded_values():
    filled = template_fill_values(
        "/people/{email}/{name}", {"email": "jane@example.com", "name": "a/b"}, frozenset({"name"})
    )
    assert filled == "/people/jane%40example.com/a/b"


def test_a_template_missing_values_names_them():
    with pytest.raises(InvalidRequest, match=r"\{id\}, \{part\}"):
        template_fill_values("/v1/{id}/{part}", {}, frozenset())


@pytest.mark.parametrize(
    "path",
    [
        "/a/../admin",
        "//evil.com/x",
        "/a\\b",
        "/http://evil",
        "/a/%2e%2e/b",
        "/a/./b",
        "/a\x00b",
        "/a%0Ab",
        "/a\nb",
        "relative",
    ],
)
def test_dangerous_caller_paths_are_refused(path):
    with pytest.raises(InvalidRequest):
        caller_path_check(path)


@pytest.mark.parametrize(
    "path",
    [
        "/emails/jane@example.com",
        "/emails/jane%40example.com/",
        "/repos/octocat/hello/compare/main...dev",
        "/links/https%3A%2F%2Fexample.com",
        "/v1/files/a%2F%2Fb",
        "/maps/@52.5,13.4",
    ],
)
def test_a_value_of_its_own_inside_a_segment_is_allowed(path):
    caller_path_check(path)


def test_a_path_parameter_is_encoded_whatever_it_holds():
    assert value_encode("email", "jane@example.com") == "jane%40example.com"
    assert value_encode("link", "https://example.com") == "https%3A%2F%2Fexample.com"
    assert value_encode("range", "main...dev") == "main...dev"
    with pytest.raises(InvalidRequest, match="control characters"):
        value_encode("id", "a\nb")


@pytest.mark.parametrize("value", ["..", ".", "", None, {"a": 1}, True])
def test_dangerous_path_parameters_are_refused(value):
    with pytest.raises(InvalidRequest):
        value_encode("id", value)


def test_path_parameters_are_percent_encoded():
    assert value_encode("id", "a b/c?d#e") == "a%20b%2Fc%3Fd%23e"
    assert value_encode("id", 42) == "42"
