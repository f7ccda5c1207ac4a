"""The discovery endpoints: search, list-endpoints, details and integrate.

Selectors build the answers as plain data; each view's output serializer documents their shape
(a test checks real answers against them). list-endpoints is served as cached JSON bytes because
a 500-API page holds some 14k endpoints, where serializers would take seconds.
"""

import time

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from catalog.models import Endpoint
from catalog.selectors import (
    catalog_list_page_json,
    endpoint_details,
    endpoint_integration,
    endpoint_search,
)
from catalog.serializers import (
    PRICE_HELP,
    PRICE_UNIT_HELP,
    CatalogApiSummarySerializer,
    CatalogParameterSerializer,
    CatalogRequirementSerializer,
)
from catalog.snippets import ALL_FORMATS, FORMATS
from gateway.inputs import (
    CallerPathField,
    DigitsIntegerField,
    RequestBodySerializer,
    query_string,
)
from gateway.pagination import offset_field

METHODS = [choice for choice, _ in Endpoint.Method.choices]


class _EndpointChoiceSerializer(RequestBodySerializer):
    api = serializers.CharField(max_length=100, help_text="The provider API's slug")
    path = CallerPathField(
        max_length=1000, help_text="A catalog path, or a concrete path matching a template"
    )
    method = serializers.ChoiceField(
        choices=METHODS,
        required=False,
        help_text="Chooses among several methods on one path (case-insensitive)",
        error_messages={"invalid_choice": f"must be one of: {', '.join(METHODS)}"},
    )

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("method"), str):
            data = {**data, "method": data["method"].upper()}
        return super().to_internal_value(data)


# --- POST /v1/search -----------------------------------------------------------------------------

SEARCH_LIMIT_MAX = 50


class _StrictCharField(serializers.CharField):
    """A JSON string only: DRF would turn 42 or true into "42" and "True"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class _StrictIntegerField(serializers.IntegerField):
    """A JSON integer only: DRF would read "10" and 10.0 as 10."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class SearchInputSerializer(RequestBodySerializer):
    prompt = _StrictCharField(
        max_length=1000,
        help_text='What the caller needs, in plain language ("is this email deliverable")',
        error_messages={"invalid": "must be a string"},
    )
    limit = _StrictIntegerField(
        min_value=1,
        max_value=SEARCH_LIMIT_MAX,
        default=10,
        help_text=f"Endpoints to return at most (1 to {SEARCH_LIMIT_MAX})",
        error_messages={"invalid": "must be an integer"},
    )


class SearchEndpointSerializer(serializers.Serializer):
    id = serializers.CharField()
    path = serializers.CharField(help_text="Pass it as path to /v1/run, details and integrate")
    method = serializers.CharField()
    description = serializers.CharField(
        allow_blank=True,
        help_text="Its summary, else its description, as plain text of at most 300 characters "
        '(cut after whole sentences, then ending " …"); details give the full description',
    )
    price = serializers.CharField(
        help_text='Decimal dollars without a symbol ("0.01"), "0" when free, or "dynamic"'
    )
    isPayable = serializers.BooleanField()
    verified = serializers.BooleanField()
    score = serializers.FloatField(
        help_text="Calibrated relevance from 0 to 1, comparable across queries: 0.5 and above is "
        "worth reading; when even the best scores below 0.3, the catalog likely has nothing for "
        "the need"
    )


class SearchApiRecordSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    slug = serializers.SlugField(help_text="Pass it as api to /v1/run, details and integrate")
    baseUrl = serializers.CharField(allow_blank=True, help_text="The provider's own address")
    payableBaseUrl = serializers.CharField(
        required=False,
        help_text="The API's pay-per-call address on the x402 rail; present when one of its "
        "endpoints here is payable",
    )
    verified = serializers.BooleanField()
    endpoints = SearchEndpointSerializer(many=True, help_text="Best first")


class SearchOutputSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    results = SearchApiRecordSerializer(
        many=True,
        help_text="Grouped by API; APIs ordered by their best endpoint. The first five endpoints "
        "are the five best whatever the limit; after them come the best of the others whose "
        "place, grouped, is after all five",
    )
    count = serializers.IntegerField(help_text="Endpoints returned")
    apisCount = serializers.IntegerField(help_text="APIs returned")
    prompt = serializers.CharField(help_text="The prompt, as sent")
    searchType = serializers.ChoiceField(choices=["semantic"])
    responseTime = serializers.FloatField(help_text="Milliseconds spent answering")


class SearchApi(APIView):
    @extend_schema(
        operation_id="search",
        summary="Find endpoints by describing the need in plain language",
        request=SearchInputSerializer,
        responses=SearchOutputSerializer,
    )
    def post(self, request):
        started = time.perf_counter()
        serializer = SearchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        results = endpoint_search(prompt=data["prompt"], limit=data["limit"])
        return Response(
            {
                "success": True,
                "results": results,
                "count": sum(len(api["endpoints"]) for api in results),
                "apisCount": len(results),
                "prompt": request.data["prompt"],
                "searchType": "semantic",
                "responseTime": round((time.perf_counter() - started) * 1000, 1),
            }
        )


# --- GET /v1/list-endpoints -----------------------------------------------------------------------


class EndpointListInputSerializer(serializers.Serializer):
    limit = DigitsIntegerField(
        min_value=1, max_value=500, default=100, help_text="APIs per page (1 to 500)"
    )
    offset = offset_field(help_text="APIs skipped")
    verified = serializers.BooleanField(
        required=False,
        default=None,
        help_text="Only verified (true) or only unverified (false) APIs and endpoints",
    )
    isPayable = serializers.BooleanField(
        required=False,
        default=None,
        help_text="Only payable (true) or only non-payable (false) endpoints",
    )


class EndpointListItemSerializer(serializers.Serializer):
    path = serializers.CharField()
    method = serializers.CharField()
    description = serializers.CharField(
        allow_blank=True,
        help_text="Its summary, else its description, as plain text of at most 300 characters "
        '(cut after whole sentences, then ending " …"); details give the full description',
    )
    price = serializers.CharField(help_text=PRICE_HELP)
    priceUnit = serializers.CharField(help_text=PRICE_UNIT_HELP)
    isPayable = serializers.BooleanField()
    verified = serializers.BooleanField()
    docsUrl = serializers.CharField(allow_blank=True)
    queryParams = CatalogParameterSerializer(many=True)
    bodyParams = CatalogParameterSerializer(many=True)


class EndpointListApiItemSerializer(CatalogApiSummarySerializer):
    category = serializers.CharField(required=False, help_text="Present when set")
    endpoints = EndpointListItemSerializer(many=True)


class EndpointListPaginationSerializer(serializers.Serializer):
    limit = serializers.IntegerField()
    offset = serializers.IntegerField()
    hasMore = serializers.BooleanField(help_text="Add limit to offset until this is false")


class EndpointListOutputSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    apis = EndpointListApiItemSerializer(many=True)
    count = serializers.IntegerField(help_text="APIs in this page")
    totalEndpoints = serializers.IntegerField(help_text="Endpoints across this page's APIs")
    pagination = EndpointListPaginationSerializer()


class EndpointListApi(APIView):
    @extend_schema(
        operation_id="list_endpoints",
        summary="The catalog, a page of APIs at a time, with their enabled endpoints",
        parameters=[EndpointListInputSerializer],
        responses=EndpointListOutputSerializer,
    )
    def get(self, request):
        serializer = EndpointListInputSerializer(data=query_string(request))
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        body = catalog_list_page_json(
            limit=data["limit"],
            offset=data["offset"],
            verified=data["verified"],
            is_payable=data["isPayable"],
        )
        return HttpResponse(body, content_type="application/json")


# --- POST /v1/details -----------------------------------------------------------------------------


class EndpointDetailsInputSerializer(_EndpointChoiceSerializer):
    pass


class EndpointDetailsEndpointSerializer(serializers.Serializer):
    path = serializers.CharField()
    method = serializers.CharField()
    description = serializers.CharField(
        allow_blank=True, help_text="Its description as the provider wrote it, else its summary"
    )
    price = serializers.CharField(help_text=PRICE_HELP)
    priceUnit = serializers.CharField(help_text=PRICE_UNIT_HELP)
    priceDetail = serializers.CharField(help_text="The price in words, with how it is counted")
    isPayable = serializers.BooleanField()
    verified = serializers.BooleanField()
    docsUrl = serializers.CharField(allow_blank=True)
    bodyType = serializers.CharField(allow_blank=True, help_text="object, array or empty")
    pathParams = CatalogParameterSerializer(many=True)
    queryParams = CatalogParameterSerializer(many=True)
    bodyParams = CatalogParameterSerializer(many=True)
    requirements = CatalogRequirementSerializer(
        many=True,
        help_text="Rules that span parameters (one of several, all or none, one needs another); "
        "/v1/run refuses a call that breaks one with a 400, before anything is charged",
    )
    paginationParams = serializers.ListField(
        child=serializers.CharField(), help_text="Request parameters that page through one result"
    )
    pollEndpoint = serializers.DictField(
        allow_null=True, help_text="For an asynchronous job: {method, path} of its free poll"
    )


class EndpointDetailsUsageSerializer(serializers.Serializer):
    runApi = serializers.CharField(help_text="The exact POST /v1/run call")
    x402 = serializers.CharField(
        required=False,
        help_text="The endpoint's pay-per-call address on the x402 rail; present when the "
        "endpoint is payable on the rails",
    )


class EndpointDetailsOutputSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    api = CatalogApiSummarySerializer()
    endpoint = EndpointDetailsEndpointSerializer()
    usage = EndpointDetailsUsageSerializer()


class EndpointDetailsApi(APIView):
    @extend_schema(
        operation_id="details",
        summary="One endpoint's parameters, price and how to call it",
        request=EndpointDetailsInputSerializer,
        responses=EndpointDetailsOutputSerializer,
    )
    def post(self, request):
        serializer = EndpointDetailsInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        return Response(
            endpoint_details(api_slug=data["api"], path=data["path"], method=data.get("method"))
        )


# --- POST /v1/integrate ---------------------------------------------------------------------------


class EndpointIntegrateInputSerializer(_EndpointChoiceSerializer):
    format = serializers.ChoiceField(
        choices=ALL_FORMATS,
        default="gw-sdk",
        error_messages={"invalid_choice": f"must be one of: {', '.join(ALL_FORMATS)}"},
    )


class EndpointIntegrateApiSerializer(serializers.Serializer):
    name = serializers.CharField()
    slug = serializers.SlugField()


class EndpointIntegrateEndpointSerializer(serializers.Serializer):
    path = serializers.CharField()
    method = serializers.CharField()
    price = serializers.CharField(help_text=PRICE_HELP)
    priceUnit = serializers.CharField(help_text=PRICE_UNIT_HELP)


EndpointIntegrateSnippetsSerializer = type(
    "EndpointIntegrateSnippetsSerializer",
    (serializers.Serializer,),
    {
        name: serializers.CharField(required=False, help_text=f"Present for {name} and all")
        for name in FORMATS
    },
)


class EndpointIntegrateSetupSerializer(serializers.Serializer):
    sdk = serializers.CharField(help_text="Install the SDK and set the key")
    x402 = serializers.CharField(help_text="Install the payment clients and set the wallet key")


class EndpointIntegrateOutputSerializer(serializers.Serializer):
    success = serializers.BooleanField()
    api = EndpointIntegrateApiSerializer()
    endpoint = EndpointIntegrateEndpointSerializer()
    format = serializers.ChoiceField(choices=ALL_FORMATS)
    snippets = EndpointIntegrateSnippetsSerializer()
    setup = EndpointIntegrateSetupSerializer()


class EndpointIntegrateApi(APIView):
    @extend_schema(
        operation_id="integrate",
        summary="Code snippets that call an endpoint",
        request=EndpointIntegrateInputSerializer,
        responses=EndpointIntegrateOutputSerializer,
    )
    def post(self, request):
        serializer = EndpointIntegrateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        return Response(
            endpoint_integration(
                api_slug=data["api"],
                path=data["path"],
                format=data["format"],
                method=data.get("method"),
            )
        )
