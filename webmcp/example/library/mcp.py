"""/mcp: the same tools for MCP clients. django-webmcp speaks the protocol and asks the person before a
consequential tool runs; this function only does what each tool does."""

from django.conf import settings
from django.http import HttpRequest
from django_webmcp.mcp import McpAnswer, McpCall, mcp_view

from . import views
from .forms import BookSearchForm
from .models import Book


def call(tool: McpCall) -> McpAnswer:
    name, arguments = tool.declaration.name, tool.arguments
    if name == "search_books":
        form = BookSearchForm(arguments)
        if not form.is_valid():
            return McpAnswer({"ok": False, "code": "INVALID_INPUT", "fields": form.errors}, is_error=True)
        books = views.search(form.cleaned_data["query"], form.cleaned_data["available"])
        return McpAnswer({"ok": True, "count": len(books), "books": books})
    book = (
        Book.objects.filter(pk=arguments.get("book_id")).first()
        if isinstance(arguments.get("book_id"), int)
        else None
    )
    if book is None:
        return McpAnswer({"ok": False, "code": "NOT_FOUND", "message": "No such book."}, is_error=True)
    if name == "get_book":
        return McpAnswer({"ok": True, **book.as_dict()})
    # borrow_book: first a preview the person agrees to, then (confirmed) the loan itself.
    if not tool.confirmed:
        if not book.available:
            return McpAnswer({"ok": False, "code": "NOT_AVAILABLE"}, is_error=True)
        return McpAnswer({"ok": True}, preview=f"Borrow “{book.title}” by {book.author}?")
    result = views.borrow(book.pk)
    return McpAnswer(result, is_error=not result["ok"])


def principal(request: HttpRequest) -> str:
    """Who calls: a confirmation is bound to it (this example has no accounts over MCP)."""
    return "anonymous"


def allowed_origins() -> set[str]:
    """Browsers send an Origin: only these may call /mcp (programs send none)."""
    return {f"http://{host}:8000" for host in settings.ALLOWED_HOSTS} | {"http://testserver"}


endpoint = mcp_view(call=call, principal=principal, allowed_origins=allowed_origins)
