"""Top-level routes: pages, API, MCP and its authorization server, health, admin, i18n."""

from django.contrib import admin
from django.urls import include, path

from accounts import api as accounts_api
from accounts import views as accounts_views
from config import health, llms, mcp
from core import errorpages
from readiness import views as readiness_views

urlpatterns = [
    path(
        "admin/agent-readiness/",
        admin.site.admin_view(readiness_views.agent_readiness),
        name="agent-readiness",
    ),
    path(
        "admin/agent-readiness/trace/<int:pk>/",
        admin.site.admin_view(readiness_views.eval_trace),
        name="agent-readiness-trace",
    ),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("health", health.health, name="health"),
    path("api/me/export", accounts_api.PersonalDataApi.as_view(), name="api-export-personal-data"),
    path("api/", include("events.api.urls")),
    path("accounts/", include("accounts.urls")),
    path("llms.txt", llms.llms_txt, name="llms-txt"),
    path("mcp", mcp.endpoint, name="mcp"),
    path("me/data/", accounts_views.my_data, name="my-data"),
    path("privacy/", accounts_views.privacy_page, name="privacy"),
    path("", include("accounts.oauth.urls")),
    path("", include("events.urls")),
]

handler404 = errorpages.not_found
handler500 = errorpages.server_error
