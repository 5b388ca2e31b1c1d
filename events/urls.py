"""Page routes. URL names follow the actions (`save-event` ↔ `save_event`). A route that a WebMCP
tool calls is told apart once, here, into the person's view (`views`) and the tool call's
(`agent.pages`)."""

from django.urls import path

from webmcp.responses import tool_or_page

from .agent import pages
from .web import door, feeds, views

urlpatterns = [
    path("", views.home, name="home"),
    path("events/", tool_or_page(views.event_list, pages.search_events), name="event-list"),
    path("events/feed.ics", feeds.public_feed, name="events-feed"),
    path("events/<str:event_id>/", views.event_detail, name="event-detail"),
    path("events/<str:event_id>/calendar.ics", views.event_ics, name="event-ics"),
    path("events/<str:event_id>/save/", tool_or_page(views.save_event, pages.save_event), name="save-event"),
    path("events/<str:event_id>/unsave/", views.unsave_event, name="unsave-event"),  # no WebMCP tool
    path(
        "events/<str:event_id>/register/",
        tool_or_page(views.register_event, pages.register_event),
        name="register-event",
    ),
    # The registration form's questions for the answers so far (htmx: conditional ones appear), and
    # My events' change of a registration's answers (no WebMCP tool).
    path("events/<str:event_id>/register/questions/", views.register_questions, name="register-questions"),
    path(
        "events/<str:event_id>/answers/",
        views.update_registration_answers,
        name="update-registration-answers",
    ),
    path(
        "events/<str:event_id>/cancel/",
        tool_or_page(views.cancel_registration, pages.cancel_registration),
        name="cancel-registration",
    ),
    path(
        "events/<str:event_id>/waitlist/join/",
        tool_or_page(views.join_waitlist, pages.join_waitlist),
        name="join-waitlist",
    ),
    path(
        "events/<str:event_id>/waitlist/leave/",
        tool_or_page(views.leave_waitlist, pages.leave_waitlist),
        name="leave-waitlist",
    ),
    path("events/<str:event_id>/ticket/resend/", views.resend_ticket, name="resend-ticket"),
    # The door: the check-in page and its forms (web/door.py); check-in-attendee takes a typed or scanned
    # code or a person chosen from the list (the one row takes either), find-attendee a name or e-mail.
    path("events/<str:event_id>/check-in/", door.check_in, name="check-in"),
    path(
        "events/<str:event_id>/check-in/admit/",
        tool_or_page(door.check_in_attendee, pages.check_in_attendee),
        name="check-in-attendee",
    ),
    path(
        "events/<str:event_id>/check-in/find/",
        tool_or_page(door.find_attendee, pages.find_attendee),
        name="find-attendee",
    ),
    path("events/<str:event_id>/check-in/undo/", door.undo_check_in, name="undo-check-in"),
    path("me/", views.me, name="me"),
    path("me/calendar/", feeds.reset_calendar_feed, name="calendar-feed-reset"),
    # The person's secret calendar address: config/settings.py keeps its token out of the logs.
    path("calendar/<str:token>.ics", feeds.personal_feed, name="calendar-feed"),
]
