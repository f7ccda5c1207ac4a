from django.urls import path

from catalog.apis import EndpointDetailsApi, EndpointIntegrateApi, EndpointListApi, SearchApi

urlpatterns = [
    path("v1/search", SearchApi.as_view(), name="search"),
    path("v1/list-endpoints", EndpointListApi.as_view(), name="list-endpoints"),
    path("v1/details", EndpointDetailsApi.as_view(), name="details"),
    path("v1/integrate", EndpointIntegrateApi.as_view(), name="integrate"),
]
