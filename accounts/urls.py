"""Account pages under /accounts/: our sign-up, then Django's sign-in, sign-out and password views."""

from django.urls import include, path

from . import views
from .oauth import views as oauth_views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("password_reset/", views.password_reset, name="password_reset"),
    path("delete/", views.delete_account, name="delete-account"),
    path("tokens/", views.access_tokens, name="access-tokens"),
    path("tokens/<int:token_id>/revoke/", views.revoke_token, name="revoke-access-token"),
    path("agents/", oauth_views.connected_agents, name="connected-agents"),
    path("agents/<int:application_id>/revoke/", oauth_views.revoke_agent, name="revoke-connected-agent"),
    path("reminders/", views.reminder_settings, name="reminder-settings"),
    path("reminders/unsubscribe/<str:token>/", views.reminders_unsubscribe, name="reminders-unsubscribe"),
    path("", include("django.contrib.auth.urls")),
]
