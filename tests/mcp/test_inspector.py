"""The MCP Inspector's CLI, an outside judge, against `/mcp` (E2): the tools it lists, and calls of the
read tools, anonymously and with a personal access token in an `Authorization` header.

`inspector --cli <url> --transport http --method …` prints the JSON result and exits 0; 5 means the
tool answered `isError`. `--strict` on tools/list also judges how portable the tool schemas are (exit 6
on an error-severity problem; warnings are printed only). The Inspector keeps a catalogue and OAuth
state under $HOME, so it runs with a HOME of its own. Evidence levels (E1–E4): docs/evidence.md.
"""

from __future__ import annotations

import json

import pytest

from accounts.models import AccessToken
from tests.factories import EventFactory, UserFactory

from .judges import INSPECTOR_CLI, run_node

pytestmark = [pytest.mark.judges, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def inspector(mcp_url, tmp_path):
    """Run `inspector --cli <our /mcp> --transport http <args>`; its parsed JSON output."""
    home = tmp_path / "home"
    home.mkdir()

    def run(*args: str) -> dict:
        finished = run_node(
            INSPECTOR_CLI,
            "--cli",
            mcp_url,
            "--transport",
            "http",
            *args,
            cwd=tmp_path,
            timeout=120,
            env={"HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json")},
        )
        assert finished.returncode == 0, (
            f"exit {finished.returncode}\n{finished.stdout[-3000:]}\n{finished.stderr}"
        )
        return json.loads(finished.stdout)

    return run


def test_tools_list_has_our_nine_tools_with_portable_schemas(inspector, mcp_tool_names):
    listed = inspector("--method", "tools/list", "--strict")
    # All of them, in the registry's order (by name).
    assert [tool["name"] for tool in listed["tools"]] == sorted(mcp_tool_names)
    assert all(tool["inputSchema"]["type"] == "object" for tool in listed["tools"])


def test_search_events_anonymously(inspector):
    EventFactory(public_id="evt-inspector", title="WebMCP with the Inspector")
    result = inspector("--method", "tools/call", "--tool-name", "search_events", "--tool-arg", "query=WebMCP")
    assert result["isError"] is False
    assert result["structuredContent"]["ok"] is True
    assert [event["id"] for event in result["structuredContent"]["events"]] == ["evt-inspector"]
    assert '"ok": true' in result["content"][0]["text"]


def test_get_event_details_with_a_bearer_token(inspector, token_for):
    EventFactory(public_id="evt-inspector", title="WebMCP with the Inspector")
    user = UserFactory(username="inspector")
    token = token_for(user, ["events:read"])
    result = inspector(
        "--method",
        "tools/call",
        "--tool-name",
        "get_event_details",
        "--tool-arg",
        "event_id=evt-inspector",
        "--header",
        f"Authorization: Bearer {token}",
    )
    assert result["isError"] is False
    body = result["structuredContent"]
    assert body["ok"] is True
    assert (body["event"]["id"], body["event"]["title"]) == ("evt-inspector", "WebMCP with the Inspector")
    assert AccessToken.objects.get(user=user).last_used_at is not None  # the header reached the server
