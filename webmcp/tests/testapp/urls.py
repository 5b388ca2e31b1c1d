"""The test app's URLs; /mcp and the OAuth metadata only where the settings project installs them."""

from __future__ import annotations

from django.conf import settings
from django.urls import path

from . import views

urlpatterns = [
    path("", views.item_list, name="item-list"),
    path("items/<str:item_id>/", views.item_detail, name="item-detail"),
    path("items/<str:item_id>/reserve", views.reserve, name="reserve"),
    path("api/search", views.api_search, name="api-search"),
    path("api/items/<str:item_id>", views.api_item, name="api-item"),
]

if getattr(settings, "TEST_WITH_MCP", False):
    from .mcp import urlpatterns as mcp_urlpatterns

    urlpatterns += mcp_urlpatterns
