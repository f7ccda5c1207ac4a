"""The base of every JSON request body the API reads."""

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
