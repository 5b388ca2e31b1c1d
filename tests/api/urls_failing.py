"""A URLconf with one API view that fails unexpectedly, to prove the 500 envelope."""

from django.urls import include, path
from rest_framework.views import APIView


class BrokenApi(APIView):
    def get(self, request):
        raise RuntimeError("boom: internal detail that must not leak")


urlpatterns = [
    path("api/broken", BrokenApi.as_view()),
    path("", include("config.urls")),
]
