"""Page routes. URL names follow the use cases (`save-event` ↔ `save_event`)."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("events/", views.event_list, name="event-list"),
    path("events/<str:event_id>/", views.event_detail, name="event-detail"),
    path("events/<str:event_id>/calendar.ics", views.event_ics, name="event-ics"),
    path("events/<str:event_id>/save/", views.save_event, name="save-event"),
    path("events/<str:event_id>/unsave/", views.unsave_event, name="unsave-event"),
    path("events/<str:event_id>/register/", views.register_event, name="register-event"),
    path("events/<str:event_id>/cancel/", views.cancel_registration, name="cancel-registration"),
    path("events/<str:event_id>/waitlist/join/", views.join_waitlist, name="join-waitlist"),
    path("events/<str:event_id>/waitlist/leave/", views.leave_waitlist, name="leave-waitlist"),
    path("me/", views.me, name="me"),
]
