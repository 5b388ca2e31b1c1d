"""MCP against the API: the same search over `/mcp`, the protocol's own calls, and a registration.

`/mcp` is stateless Streamable HTTP with JSON answers (django_webmcp/mcp.py): every POST is a whole call, so
wrk can send one again and again, as it sends the API search. The sides, in alternating wrk slices
at the same connections on one server: `GET /api/events?…`, `tools/call search_events` with the same
filters, `tools/list` and `initialize`. Then, on the writes' database restored from its template, a
signed-in `register_event` over MCP with its confirmation (two calls: the preview and its signed
confirmation, then the call that registers) against `POST /api/events/<id>/registration`, both with a
personal access token, each visit a different person (bench/visits.py).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

from bench import load, visits
from bench.figures.throughput import SEARCH_PATH
from bench.infra import BenchError, log
from bench.tables import verdict
from bench.writes import WritesSite

NAME = "mcp"
TARGETS = {"mcp_search_ratio": 0.5}
FILTERS = {"location": "taipei", "price": "free", "level": "beginner"}  # SEARCH_PATH's
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
#: bench.tasks peer-queries' rows that are this group's.
STATEMENT_ROWS = (
    "MCP initialize",
    "MCP tools/list",
    "MCP search_events",
    "MCP search_events, signed in",
    "MCP register_event (preview + confirmed)",
    "REST registration (bearer token)",
)


def tool_call(name: str, arguments: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _encoded(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def post_mcp(base_url: str, payload: dict, headers: dict[str, str] | None = None) -> dict:
    """One POST /mcp; its JSON-RPC result, or BenchError."""
    request = urllib.request.Request(
        base_url + "/mcp", data=_encoded(payload), headers={**HEADERS, **(headers or {})}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            status, body = answer.status, answer.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    found = json.loads(body) if body.startswith(b"{") else {}
    if status != 200 or "result" not in found:
        raise BenchError(f"/mcp {payload['method']} answered {status}: {body[:300]!r}")
    return found["result"]


def _checked_reads(base_url: str) -> int:
    """The MCP search answers what the API answers (the same total), and the protocol calls list the
    tools and name the server; the search's total."""
    with urllib.request.urlopen(base_url + SEARCH_PATH, timeout=10) as answer:
        api = json.loads(answer.read())
    result = post_mcp(base_url, tool_call("search_events", FILTERS))
    found = result.get("structuredContent") or {}
    if result.get("isError") or found.get("total") != api["total"] or found.get("count") != api["count"]:
        raise BenchError(f"search_events over MCP answered {found} where the API found {api['total']}")
    tools = post_mcp(base_url, TOOLS_LIST).get("tools", [])
    if "search_events" not in {tool["name"] for tool in tools}:
        raise BenchError("tools/list does not list search_events")
    if "serverInfo" not in post_mcp(base_url, INITIALIZE):
        raise BenchError("initialize named no server")
    return int(api["total"])


# ---- visits: one person registering, over REST and over MCP -------------------------------------


async def rest_registration(port: int, event: str, token: str) -> int:
    """`POST /api/events/<id>/registration` with a bearer token: 201 and a confirmed registration."""
    visitor = visits.Visitor(port)
    answer = await visitor.send(
        "POST",
        f"/api/events/{event}/registration",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        expect=(201,),
    )
    body = answer.json()
    if not body.get("ok") or body.get("registration", {}).get("status") != "confirmed":
        raise visits.VisitFailed(f"REST registration answered {body}")
    return visitor.requests


async def mcp_registration(port: int, event: str, token: str) -> int:
    """`register_event` over MCP, as a client without elicitation does it: the call answers a preview
    and a signed confirmation; the call with that confirmation registers."""
    visitor = visits.Visitor(port)
    signed_in = {**HEADERS, "Authorization": f"Bearer {token}"}
    asked = await visitor.send(
        "POST", "/mcp", headers=signed_in, body=_encoded(tool_call("register_event", {"event_id": event}))
    )
    confirmation = asked.json()["result"]["structuredContent"].get("confirmation")
    if not confirmation:
        raise visits.VisitFailed(f"register_event gave no confirmation: {asked.body[:300]!r}")
    arguments = {"event_id": event, "confirmation": confirmation}
    done = await visitor.send(
        "POST", "/mcp", headers=signed_in, body=_encoded(tool_call("register_event", arguments))
    )
    result = done.json()["result"]
    content = result.get("structuredContent") or {}
    if result.get("isError") or content.get("registration", {}).get("status") != "confirmed":
        raise visits.VisitFailed(f"register_event answered {content}")
    return visitor.requests


def _visits(kind, port: int, event: str, people: Iterator[tuple[str, str]]) -> Iterator[visits.Visit]:
    for _, token in people:
        yield lambda token=token: kind(port, event, token)


def measure(site: WritesSite, statements: dict, profile: dict) -> dict:
    base, port = site.server.base_url, site.server.port
    total = _checked_reads(base)
    log(f"MCP vs API search, tools/list, initialize: {profile['connections']} connections, alternating")
    logged_before = len(site.server.errors_logged())
    slices = load.alternate(
        {
            "api": base + SEARCH_PATH,
            "mcp": base + "/mcp",
            "list": base + "/mcp",
            "init": base + "/mcp",
        },
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=profile["connections"],
        threads=2,
        warmup=profile["warmup_s"],
        headers={"mcp": HEADERS, "list": HEADERS, "init": HEADERS},
        bodies={
            "mcp": _encoded(tool_call("search_events", FILTERS)),
            "list": _encoded(TOOLS_LIST),
            "init": _encoded(INITIALIZE),
        },
    )
    reads = {name: load.summarize(items) for name, items in slices.items()}
    _checked_reads(base)  # still the same answers after the load
    logged = site.server.errors_logged()[logged_before:]
    log(f"register_event over MCP (with its confirmation) vs REST, {profile['peer_connections']} connections")
    site.reset()
    event, people = site.setup["event"], site.people()
    writes = visits.alternate(
        {
            "rest": _visits(rest_registration, port, event, people),
            "mcp": _visits(mcp_registration, port, event, people),
        },
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=profile["peer_connections"],
        warmup=profile["warmup_s"],
    )
    completed = sum(side["completed"] + side["warmup_completed"] for side in writes.values())
    confirmed = site.confirmed()
    logged += site.server.errors_logged()
    rows = statements["rows"]
    return {
        "connections": profile["connections"],
        "write_connections": profile["peer_connections"],
        "total_matching": total,
        "reads": reads,
        "writes": writes,
        "mcp_search_ratio": round(reads["mcp"]["rate"] / reads["api"]["rate"], 3),
        "mcp_register_ratio": round(writes["mcp"]["rate"] / writes["rest"]["rate"], 3)
        if writes["rest"]["rate"]
        else 0.0,
        "statements": {name: rows[name] for name in STATEMENT_ROWS if name in rows},
        "completed": completed,
        "confirmed": confirmed,
        "errors": sum(side["errors"] for side in reads.values())
        + sum(side["failed"] for side in writes.values())
        + len(logged),
        "server_errors_logged": logged[:10],
    }


def _sql(m: dict, name: str) -> str:
    counts = m["statements"].get(name, {})
    values = sorted(set(counts.values()))
    return "–" if not values else "–".join(map(str, values))


def rows(m: dict) -> list[tuple[str, str, str, str]]:
    ok = m["errors"] == 0
    reads, writes = m["reads"], m["writes"]
    constant = all(len(set(counts.values())) == 1 for counts in m["statements"].values())
    return [
        (
            "MCP tools/call search_events ÷ API search throughput",
            f"{m['mcp_search_ratio']:.2f} ({reads['mcp']['rate']:.0f} vs {reads['api']['rate']:.0f} req/s; "
            f"SQL {_sql(m, 'MCP search_events')} vs 1)",
            f"≥ {TARGETS['mcp_search_ratio']}",
            verdict(m["mcp_search_ratio"] >= TARGETS["mcp_search_ratio"] and ok),
        ),
        (
            "MCP tools/list and initialize per second",
            f"{reads['list']['rate']:.0f} and {reads['init']['rate']:.0f} req/s "
            f"(SQL {_sql(m, 'MCP tools/list')} and {_sql(m, 'MCP initialize')})",
            "information",
            "–",
        ),
        (
            "SQL statements per MCP call",
            ", ".join(
                f"{name.removeprefix('MCP ')} {_sql(m, name)}"
                for name in STATEMENT_ROWS
                if name.startswith("MCP")
            )
            + f"; {'constant' if constant else 'NOT constant'} in N",
            "constant",
            verdict(constant),
        ),
        (
            "MCP register_event with its confirmation ÷ REST registration (bearer token)",
            f"{m['mcp_register_ratio']:.2f} ({writes['mcp']['rate']:.0f} vs {writes['rest']['rate']:.0f} "
            f"registrations/s; {writes['mcp']['requests_per_visit']:g} vs "
            f"{writes['rest']['requests_per_visit']:g} requests, SQL "
            f"{_sql(m, 'MCP register_event (preview + confirmed)')} vs "
            f"{_sql(m, 'REST registration (bearer token)')})",
            "information",
            "–",
        ),
    ]


def failures(m: dict) -> list[str]:
    found = []
    if m["errors"]:
        found.append(f"mcp: {m['errors']} failed requests or visits, or server errors")
    if m["confirmed"] != m["completed"]:
        found.append(
            f"mcp: {m['completed']} registrations answered, {m['confirmed']} confirmed in the database"
        )
    if not all(len(set(counts.values())) == 1 for counts in m["statements"].values()):
        found.append("mcp: a statement count changes with N")
    return found
