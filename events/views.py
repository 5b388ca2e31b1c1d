"""Plain pages; the htmx pages replace these."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from .models import Event


def home(request: HttpRequest) -> HttpResponse:
    return redirect("event-list")


def event_list(request: HttpRequest) -> HttpResponse:
    events = Event.objects.published().upcoming()
    return render(request, "events/event_list.html", {"events": events})


def event_detail(request: HttpRequest, event_id: str) -> HttpResponse:
    event = get_object_or_404(Event.objects.public(), public_id=event_id)
    return render(request, "events/event_detail.html", {"event": event})
