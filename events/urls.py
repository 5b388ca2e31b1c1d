from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("events/", views.event_list, name="event-list"),
    path("events/<str:event_id>/", views.event_detail, name="event-detail"),
]
