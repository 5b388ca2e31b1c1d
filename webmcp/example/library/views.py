from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_webmcp.responses import tool_or_page

from .forms import BookSearchForm
from .models import Book


def book_list(request: HttpRequest) -> HttpResponse:
    return render(request, "library/book_list.html", {"books": Book.objects.order_by("title")})


def book_detail(request: HttpRequest, book_id: int) -> HttpResponse:
    book = get_object_or_404(Book, pk=book_id)
    # What the page's tools may look at: borrow_book is offered only while the book is available.
    return render(
        request, "library/book_detail.html", {"book": book, "webmcp_state": {"available": book.available}}
    )


def search(query: str = "", available: bool = False) -> list[dict]:
    books = Book.objects.order_by("title")
    if query:
        books = books.filter(title__icontains=query) | books.filter(author__icontains=query)
    if available:
        books = books.filter(available=True)
    return [book.as_dict() for book in books]


@require_GET
def api_search(request: HttpRequest) -> JsonResponse:
    form = BookSearchForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"ok": False, "code": "INVALID_INPUT", "fields": form.errors}, status=400)
    books = search(form.cleaned_data["query"], form.cleaned_data["available"])
    return JsonResponse({"ok": True, "count": len(books), "books": books})


@require_GET
def api_book(request: HttpRequest, book_id: int) -> JsonResponse:
    book = Book.objects.filter(pk=book_id).first()
    if book is None:
        return JsonResponse({"ok": False, "code": "NOT_FOUND", "message": "No such book."}, status=404)
    return JsonResponse({"ok": True, **book.as_dict()})


def borrow(book_id: int) -> dict:
    """Borrow a book: one conditional UPDATE, so two people cannot borrow the same copy."""
    taken = Book.objects.filter(pk=book_id, available=True).update(available=False)
    if not taken:
        return {"ok": False, "code": "NOT_AVAILABLE", "message": "This book cannot be borrowed now."}
    return {"ok": True, "borrowed": book_id}


def _borrow_page(request: HttpRequest, book_id: int) -> HttpResponse:
    borrow(book_id)
    return redirect("book-detail", book_id=book_id)


def _borrow_tool(request: HttpRequest, book_id: int) -> HttpResponse:
    result = borrow(book_id)
    return JsonResponse(result, status=200 if result["ok"] else 409)


# One route for the person's button and the agent's tool call, told apart by the tool header.
borrow_book = require_POST(tool_or_page(_borrow_page, _borrow_tool))
