from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import views

urlpatterns = [
    path("events", views.EventSearchApi.as_view(), name="api-search-events"),
    path("events/<str:event_id>", views.EventDetailApi.as_view(), name="api-get-event-details"),
    path("events/<str:event_id>/registration", views.RegistrationApi.as_view(), name="api-registration"),
    path("me/saved", views.SavedListApi.as_view(), name="api-list-saved"),
    path("me/saved/<str:event_id>", views.SavedEventApi.as_view(), name="api-save-event"),
    path("me/registrations", views.RegistrationListApi.as_view(), name="api-list-registrations"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]
