"""In Chromium with WebMCP: the tools the pages register, called as an agent calls them."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_agent_searches_reads_and_borrows_with_the_persons_press(books, live_server, webmcp_page):
    page = webmcp_page.open(live_server.url + "/", expected=["get_book", "search_books"])
    search = page.tool("search_books")
    assert search["annotations"] == {"readOnlyHint": True, "untrustedContentHint": True}
    assert page.call("search_books", {"query": "emma"})["count"] == 1

    dune = books["dune"].pk
    page.open(f"{live_server.url}/books/{dune}/", expected=["borrow_book", "get_book"])
    assert page.call("get_book", {})["title"] == "Dune"
    assert page.tool("borrow_book")["annotations"] == {"consequentialHint": True}
    page.start("borrow_book", {})
    assert page.pending_confirmation()["button"] == "Borrow"
    page.confirm()
    assert page.finish()["ok"] is True
