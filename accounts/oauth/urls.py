"""The authorization server's endpoints, at the root (some clients build `/authorize`, `/token` and
`/register` from the issuer, so those are their only paths; a POST is never redirected to add a slash).
Named in django-oauth-toolkit's namespace, whose metadata view reverses them. Its application
management pages are not mounted: clients register themselves or are added in the admin.
"""

from django.urls import path
from oauth2_provider import views as oauth_views

from . import clients, resource, views

app_name = "oauth2_provider"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        oauth_views.OAuthServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        resource.ProtectedResourceMetadata.as_view(),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        resource.ProtectedResourceMetadata.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path("authorize", views.consent, name="authorize"),
    path("token", oauth_views.TokenView.as_view(), name="token"),
    path("revoke", oauth_views.RevokeTokenView.as_view(), name="revoke-token"),
    path("register", clients.register, name="dcr-register"),
    path(
        "register/<str:client_id>",
        clients.ClientManagementView.as_view(),
        name="dcr-register-management",
    ),
]
