from django.urls import path

from . import mcp, views

urlpatterns = [
    path("", views.book_list, name="book-list"),
    path("books/<int:book_id>/", views.book_detail, name="book-detail"),
    path("books/<int:book_id>/borrow", views.borrow_book, name="borrow-book"),
    path("api/books", views.api_search, name="api-search-books"),
    path("api/books/<int:book_id>", views.api_book, name="api-book"),
    path("mcp", mcp.endpoint, name="mcp"),
]
