"""Page routes. URL names follow the actions (`save-event` ↔ `save_event`). A route that a WebMCP
tool calls is told apart once, here, into the person's view (`web`) and the tool call's
(`agent.pages`).

The route of every row with a page (`Action.page`, a person's button on an event) is made from the row,
as the API's are from `ACTION_ROUTES`: one page view (`views.write`) serves them all, and one tool-call
view (`pages.write`) those a declared WebMCP tool calls."""

from collections.abc import Callable

from django.http import HttpResponse
from django.urls import URLPattern, path
from django_webmcp.registry import registry
from django_webmcp.responses import tool_or_page

from .actions import ACTIONS, Action
from .agent import pages
from .web import door, feeds, views


def _write_route(row: Action) -> URLPattern:
    """A row's page route: the person's button, and the tool call when a tool's endpoint is this route."""
    tool = registry.get(row.name)
    view: Callable[..., HttpResponse] = views.write
    if tool is not None and tool.endpoint == row.url_name:
        view = tool_or_page(views.write, pages.write)
    return path(f"events/<str:event_id>/{row.page}", view, {"action": row.name}, name=row.url_name)


urlpatterns = [
    path("", views.home, name="home"),
    path("events/", tool_or_page(views.event_list, pages.search_events), name="event-list"),
    path("events/feed.ics", feeds.public_feed, name="events-feed"),
    path("events/<str:event_id>/", views.event_detail, name="event-detail"),
    path("events/<str:event_id>/calendar.ics", views.event_ics, name="event-ics"),
    *(_write_route(row) for row in ACTIONS.values() if row.page is not None),
    # The registration form's questions redrawn for the answers so far (htmx: a conditional one appears).
    path("events/<str:event_id>/register/questions/", views.register_questions, name="register-questions"),
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
    # The person's own payment for an event (sign-in needed; the address names nobody).
    path("events/<str:event_id>/payment/", views.payment, name="payment"),
    path("me/", views.me, name="me"),
    path("me/calendar/", feeds.reset_calendar_feed, name="calendar-feed-reset"),
    # The person's secret calendar address: config/settings.py keeps its token out of the logs.
    path("calendar/<str:token>.ics", feeds.personal_feed, name="calendar-feed"),
]
