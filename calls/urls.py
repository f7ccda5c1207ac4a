from django.urls import path

from calls.apis import RunApi

urlpatterns = [
    path("v1/run", RunApi.as_view(), name="run"),
]
