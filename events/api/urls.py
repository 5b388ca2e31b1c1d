from django.conf import settings
from django.urls import path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import views

# The docs UI runs Swagger UI from local files with its init script served separately (no inline
# script); Swagger UI sets inline styles, so only this page allows them.
docs_view = csp_override({**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]})(
    SpectacularSwaggerSplitView.as_view(url_name="api-schema")
)

urlpatterns = [
    path("events", views.EventSearchApi.as_view(), name="api-search-events"),
    path("events/<str:event_id>", views.EventDetailApi.as_view(), name="api-get-event-details"),
    path("me/saved", views.SavedListApi.as_view(), name="api-list-saved"),
    path("me/registrations", views.RegistrationListApi.as_view(), name="api-list-registrations"),
    path("me/waitlist", views.WaitlistListApi.as_view(), name="api-list-waitlist"),
    *(path(route, view.as_view(), name=name) for route, (name, view) in views.ACTION_ROUTES.items()),
    path(
        "registrations/<int:registration_id>/approve",
        views.ApproveRegistrationApi.as_view(),
        name="api-approve-registration",
    ),
    path(
        "registrations/<int:registration_id>/decline",
        views.DeclineRegistrationApi.as_view(),
        name="api-decline-registration",
    ),
    path(
        "registrations/<int:registration_id>/staff-answers",
        views.StaffAnswersApi.as_view(),
        name="api-update-staff-answers",
    ),
    path(
        "events/<str:event_id>/payments/<int:attendee_id>/confirm",
        views.ConfirmPaymentApi.as_view(),
        name="api-confirm-payment",
    ),
    path(
        "events/<str:event_id>/payments/<int:attendee_id>/refund",
        views.RefundPaymentApi.as_view(),
        name="api-refund-payment",
    ),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", docs_view, name="api-docs"),
]
