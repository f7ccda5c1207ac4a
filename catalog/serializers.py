"""Serializers shared by the catalog's API views (parameter records appear in several answers)."""

from rest_framework import serializers


class CatalogParameterSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField(help_text="string, integer, number, boolean, array, object, file")
    required = serializers.BooleanField()
    description = serializers.CharField(allow_blank=True)
    enum = serializers.ListField(child=serializers.JSONField(), required=False)
    default = serializers.JSONField(required=False)
    example = serializers.JSONField(required=False)
    format = serializers.CharField(required=False)
    items = serializers.CharField(required=False, help_text="The item type of an array")
    minimum = serializers.FloatField(required=False)
    maximum = serializers.FloatField(required=False)
    exclusiveMinimum = serializers.BooleanField(
        required=False, help_text="The minimum itself is out of bounds (OpenAPI 2 and 3.0)"
    )
    exclusiveMaximum = serializers.BooleanField(
        required=False, help_text="The maximum itself is out of bounds (OpenAPI 2 and 3.0)"
    )
    minLength = serializers.IntegerField(required=False)
    maxLength = serializers.IntegerField(required=False)
    minItems = serializers.IntegerField(required=False)
    maxItems = serializers.IntegerField(required=False)
    pattern = serializers.CharField(required=False)
    multiSegment = serializers.BooleanField(
        required=False,
        help_text=(
            "A path parameter whose value spans several segments and keeps its slashes, such as "
            "Google's resource names (projects/p/locations/l); OpenAPI's x-reservedExpansion"
        ),
    )


class CatalogRequirementSerializer(serializers.Serializer):
    """One rule that spans parameters (x-gateway-requirements); it has one of anyOf, oneOf,
    allOrNone or if (with then)."""

    anyOf = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="At least one alternative is sent; each alternative is names sent together",
    )
    oneOf = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Exactly one alternative is sent; each alternative is names sent together",
    )
    allOrNone = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Sent all together, or none"
    )
    # "if" is a Python keyword: the field is declared below under its JSON name.
    then = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Needed when if is sent"
    )
    description = serializers.CharField(help_text='The rule in words: "Send domain or company."')


CatalogRequirementSerializer._declared_fields["if"] = serializers.CharField(
    required=False, help_text="A parameter that, when sent, needs every one of then"
)


class CatalogApiSummarySerializer(serializers.Serializer):
    name = serializers.CharField()
    slug = serializers.SlugField()
    description = serializers.CharField(allow_blank=True)
    baseUrl = serializers.CharField(allow_blank=True, help_text="The provider's own address")
    verified = serializers.BooleanField()


PRICE_HELP = (
    '"$0.01" per call, "$0.00" when free, "$0.0025" per result (see priceUnit), or "dynamic" '
    "(per token)"
)
PRICE_UNIT_HELP = 'What the price is for: "call", "result" or "token" (dynamic)'
