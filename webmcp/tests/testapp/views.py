"""Pages and the endpoints their tools call."""

from __future__ import annotations

import json

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_webmcp.responses import tool_call, tool_or_page

from . import data
from .forms import NoteForm, SearchForm


def item_list(request: HttpRequest) -> HttpResponse:
    return render(request, "testapp/list.html", {"items": data.search(), "note_form": NoteForm()})


def item_detail(request: HttpRequest, item_id: str) -> HttpResponse:
    item = data.ITEMS.get(item_id)
    if item is None:
        raise Http404
    state = {"reservable": not item["reserved"]}
    return render(request, "testapp/detail.html", {"item": item, "webmcp_state": state})


@require_GET
def api_search(request: HttpRequest) -> JsonResponse:
    form = SearchForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"ok": False, "code": "INVALID_INPUT", "fields": form.errors}, status=400)
    found = data.search(form.cleaned_data["query"], form.cleaned_data["kind"])
    return JsonResponse({"ok": True, "count": len(found), "items": found})


@require_GET
def api_item(request: HttpRequest, item_id: str) -> JsonResponse:
    item = data.ITEMS.get(item_id)
    if item is None:
        return JsonResponse({"ok": False, "code": "NOT_FOUND"}, status=404)
    return JsonResponse({"ok": True, **item})


def _reserve_page(request: HttpRequest, item_id: str) -> HttpResponse:
    data.ITEMS[item_id]["reserved"] = True
    return redirect("item-detail", item_id=item_id)


def _reserve_tool(request: HttpRequest, item_id: str) -> HttpResponse:
    if item_id not in data.ITEMS:
        return JsonResponse({"ok": False, "code": "NOT_FOUND"}, status=404)
    if request.body and json.loads(request.body):
        return JsonResponse({"ok": False, "code": "INVALID_INPUT"}, status=400)
    data.ITEMS[item_id]["reserved"] = True
    return JsonResponse({"ok": True, "reserved": item_id, "tool": tool_call(request)})


reserve = require_POST(tool_or_page(_reserve_page, _reserve_tool))
