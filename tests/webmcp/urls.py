"""A URLconf with typed converters and a namespace, for the endpoint-template tests."""

from django.http import HttpResponse
from django.urls import include, path


def view(request, **kwargs) -> HttpResponse:
    return HttpResponse()


shop = ([path("things/<int:pk>", view, name="thing")], "shop")

urlpatterns = [
    path("things/<int:pk>/parts/<slug:part>/<uuid:ref>", view, name="typed"),
    path("shop/", include(shop)),
]
