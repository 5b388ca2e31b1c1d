"""The pages carry their tools; the endpoints the tools call answer as the tools promise."""

import json
from pathlib import Path

from django.test import Client

CATALOGUE = Path(__file__).with_name("catalogue.json")


def manifest(html: str) -> dict:
    opening = '<script id="webmcp-manifest" type="application/json">'
    start = html.index(opening) + len(opening)
    return json.loads(html[start : html.index("</script>", start)])


def test_the_tool_catalogue_is_the_recorded_one(webmcp_catalogue):
    webmcp_catalogue(CATALOGUE)


def test_the_list_page_offers_search_and_lookup(books):
    tools = manifest(Client().get("/").content.decode())["tools"]
    assert [tool["name"] for tool in tools] == ["get_book", "search_books"]


def test_a_book_page_binds_get_book_to_its_book_and_asks_before_borrowing(books):
    dune = books["dune"]
    html = Client().get(f"/books/{dune.pk}/").content.decode()
    tools = {tool["name"]: tool for tool in manifest(html)["tools"]}
    assert tools["get_book"]["routeValues"] == {"book_id": dune.pk}
    assert tools["borrow_book"]["confirm"] is True
    assert 'data-webmcp-confirm="borrow_book"' in html


def test_search_endpoint(books):
    answer = Client().get("/api/books", {"query": "austen"}).json()
    assert answer["count"] == 1 and answer["books"][0]["title"] == "Emma"


def test_borrowing_by_tool_answers_json_and_twice_is_refused(books):
    client = Client()
    url = f"/books/{books['dune'].pk}/borrow"
    first = client.post(url, "", content_type="application/json", HTTP_X_WEBMCP_TOOL="borrow_book")
    assert first.json() == {"ok": True, "borrowed": books["dune"].pk}
    again = client.post(url, "", content_type="application/json", HTTP_X_WEBMCP_TOOL="borrow_book")
    assert again.status_code == 409


def test_the_person_presses_borrow_and_is_sent_back_to_the_book(books):
    response = Client().post(f"/books/{books['emma'].pk}/borrow")
    assert response.status_code == 302
