"""The same tools over MCP, with the official SDK's client (in-process: no server needed)."""

import pytest
from django_webmcp.testing.mcp import run

pytestmark = pytest.mark.django_db(transaction=True)


def test_mcp_lists_and_calls_the_tools(books, webmcp_mcp_client):
    async def session():
        async with webmcp_mcp_client("/mcp") as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            found = await client.call_tool("search_books", {"query": "dune"})
            return names, found

    names, found = run(session())
    assert names == ["borrow_book", "get_book", "search_books"]
    assert found.structured_content["count"] == 1


def test_borrow_book_says_over_mcp_which_book_it_takes(webmcp_mcp_client):
    """On a book's page borrow_book takes nothing; over MCP its schema names the book (an integer, as
    the route's <int:book_id>), so a client that follows the schema can call it."""

    async def session():
        async with webmcp_mcp_client("/mcp") as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    schema = run(session())["borrow_book"].input_schema
    assert schema["properties"]["book_id"] == {"type": "integer", "minimum": 0}
    assert schema["required"] == ["book_id"] and schema["additionalProperties"] is False


def test_borrowing_over_mcp_needs_the_persons_confirmation(books, webmcp_mcp_client):
    dune = books["dune"].pk

    async def session():
        async with webmcp_mcp_client("/mcp") as client:
            preview = await client.call_tool("borrow_book", {"book_id": dune})
            confirmation = preview.structured_content["confirmation"]
            done = await client.call_tool("borrow_book", {"book_id": dune, "confirmation": confirmation})
            return preview, done

    preview, done = run(session())
    assert preview.is_error and preview.structured_content["preview"] == "Borrow “Dune” by Frank Herbert?"
    assert done.structured_content == {"ok": True, "borrowed": dune}
