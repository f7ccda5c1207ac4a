"""How the API reads its inputs: JSON request bodies and query strings."""

from collections.abc import Mapping

from rest_framework import serializers


class RequestBodySerializer(serializers.Serializer):
    """A JSON object whose fields are all declared.

    A field the route does not take is a 400 naming it: a misspelt or misplaced input ("querry",
    "params") would otherwise be dropped, and the call run, and charged, without it.
    """

    default_error_messages = {"invalid": "The request body must be a JSON object, not {datatype}."}

    def to_internal_value(self, data):
        if isinstance(data, Mapping):
            unknown = [name for name in data if name not in self.fields]
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: f"unknown field; this request takes {known}" for name in unknown}
                )
        return super().to_internal_value(data)


def query_string(request) -> dict:
    """A GET route's query string as a plain dict for its serializer. DRF reads a QueryDict as
    form data: a missing boolean as false, and an empty value (`?limit=`) as absent; as a dict,
    a missing field takes its default and an empty one is refused like any other bad value."""
    return request.query_params.dict()
