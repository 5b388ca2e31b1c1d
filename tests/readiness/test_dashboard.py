"""The agent-readiness dashboard: who may see it, how many queries, and each section's numbers."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.revision import revision
from core.visitors import Mode, Visitor
from events import actions
from events.actions import ACTIONS, Caller, perform
from readiness.models import EvalResult
from readiness.reports import import_report
from tests.factories import ActivityFactory, EventFactory, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/admin/agent-readiness/"
EN = {"Accept-Language": "en"}


def report(
    rev: str,
    outcomes: dict[str, str],
    *,
    started: str = "2026-11-30T10:00:00Z",
    changed: bool = False,
    mode: str = "smoke",
    via: str = "webmcp",
    finished: str | None = None,
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m",
) -> bytes:
    """An eval report as evals/report.py writes it (the fields the import reads)."""
    end = {"revision": rev + "-new" if changed else rev, "toolCatalogueFingerprint": "sha256:x"}
    return json.dumps(
        {
            "kind": "agentready-evals-report",
            "formatVersion": 1,
            "mode": mode,
            "via": via,
            "model": {"model": model} if mode == "model" else None,
            "startedAt": started,
            "finishedAt": finished or started,
            "health": {"start": {"revision": rev, "toolCatalogueFingerprint": "sha256:x"}, "end": end},
            "totals": {},
            "cases": [
                {
                    "name": name,
                    "category": name.split("-")[0],
                    "case": {"meta": {"route": "/events/"}},
                    "outcome": outcome,
                    "reasons": [] if outcome == "pass" else ["expected search_events, got nothing"],
                    "durationMs": 30_000,
                    "trace": {
                        "calls": [{"functionName": "save_event", "args": {}}],
                        "tokens": {"prompt": 1200, "completion": 40, "largestPrompt": 900, "requests": 2},
                    }
                    if mode == "model"
                    else {"calls": []},
                }
                for name, outcome in outcomes.items()
            ],
        }
    ).encode()


@pytest.fixture
def staff_client() -> Client:
    client = Client(headers=EN)
    client.force_login(UserFactory(username="organiser", is_staff=True, is_superuser=True))
    return client


def test_staff_only(db):
    assert Client().get(URL).status_code == 302  # to the admin's sign-in
    visitor = Client()
    visitor.force_login(UserFactory(username="visitor"))
    assert visitor.get(URL).status_code == 302


def test_linked_from_the_admin_index(staff_client):
    assert f'href="{URL}"' in staff_client.get("/admin/").content.decode()


def test_eight_queries_whatever_the_data(staff_client):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert staff_client.get(URL).status_code == 200
        return len(captured)

    import_report(report("rev-small", {"SEL-01": "fail"}, mode="model"))  # a failing case to list
    small = queries()
    event = EventFactory()
    for n in range(30):
        ActivityFactory(action="register_event", mode="agent", outcome="EVENT_FULL", event=event)
        ActivityFactory(action="search_events", mode=["ui", "api", "mcp"][n % 3], outcome="OK")
        ActivityFactory(action="search_events", mode="mcp", outcome="OK", client=f"Agent {n}")
    for n in range(3):
        import_report(
            report(f"rev{n}", {f"SEL-0{i}": "pass" for i in range(5)}, started=f"2026-11-2{n}T10:00:00Z")
        )
        for via in ("webmcp", "mcp"):
            outcomes = {f"SEL-0{i}": ("pass", "fail", "error")[i % 3] for i in range(5)}
            import_report(
                report(f"rev{n}", outcomes, started=f"2026-11-2{n}T11:00:00Z", mode="model", via=via)
            )
    assert queries() == small <= 8


def test_tools_per_page_and_state(staff_client):
    html = staff_client.get(URL).content.decode()
    section = html[html.index('id="tools-heading"') : html.index('id="evals-heading"')]
    for state in (
        "anonymous",
        "registered",
        "full",
        "on the waiting list",
        "a seat held for them",
        "cancelled",
        "past",
    ):
        assert f"<td>{state}</td>" in section, state
    assert "<code>join_waitlist</code>" in section and "<code>register_event</code> ✓" in section
    assert "MCP (/mcp)" in section


def test_pass_rates_per_category_for_this_revision_and_others_apart(staff_client):
    here = revision()
    import_report(
        report(
            "old-revision",
            {"SEL-01": "pass", "SEL-02": "pass", "NO-01": "pass"},
            started="2026-11-29T10:00:00Z",
        )
    )
    import_report(report(here, {"SEL-01": "pass", "SEL-02": "fail", "NO-01": "pass"}))
    import_report(report("changed", {"SEL-01": "fail"}, changed=True))  # the site changed mid-run
    # A real model's run of this revision is shown in its own section, never in these rates
    import_report(report(here, {"SEL-01": "fail", "NO-01": "fail"}, mode="model"))
    html = staff_client.get(URL).content.decode()
    table = html[html.index('id="eval-rates"') : html.index("</table>", html.index('id="eval-rates"'))]
    rows = table.split("<tr")
    [current] = [row for row in rows if "(this server)" in row]
    [other] = [row for row in rows if "old-revision"[:8] in row]
    assert "<td>100 %</td>" in current and "<td>50 %</td>" in current  # NO 1/1, SEL 1/2
    assert "(another revision)" in other and "<code>changed" not in table
    regressions = html[html.index('id="regressions"') :]
    assert "SEL-02" in regressions and "expected search_events, got nothing" in regressions
    assert "SEL-01" not in regressions.split("</ul>")[0] and "NO-01" not in regressions.split("</ul>")[0]


def test_a_stub_models_run_is_scripted_it_counts_in_the_rates_and_not_as_a_model(staff_client):
    """The stub's policies (evals/stub_model.py) are scripts, as a smoke run is: their results are
    the tools' rates and regressions, never the model section's."""
    here = revision()
    import_report(report(here, {"SEL-01": "pass", "NO-01": "pass"}))
    import_report(report(here, {"SEL-01": "fail", "NO-01": "pass"}, mode="model", model="stub-good"))
    html = staff_client.get(URL).content.decode()
    table = html[html.index('id="eval-rates"') : html.index("</table>", html.index('id="eval-rates"'))]
    [current] = [row for row in table.split("<tr") if "(this server)" in row]
    assert "<td>100 %</td>" in current and "<td>50 %</td>" in current  # NO 2/2, SEL 1/2
    assert 'id="model-runs"' not in html and "stub-good" not in html  # no real model's run to show


def test_usage_by_mode_and_refusals(staff_client):
    event = EventFactory()
    now = timezone.now()
    for days_ago, mode, count in ((0, "agent", 3), (0, "mcp", 2), (2, "ui", 4), (40, "api", 9)):
        for _ in range(count):
            ActivityFactory(
                action="search_events", mode=mode, outcome="OK", created_at=now - timedelta(days=days_ago)
            )
    for _ in range(2):
        ActivityFactory(action="register_event", mode="agent", outcome="EVENT_FULL", event=event)
    ActivityFactory(action="save_event", mode="ui", outcome="ALREADY_SAVED")  # a repeat, not a refusal
    html = staff_client.get(URL).content.decode()
    usage = html[html.index('id="usage-table"') : html.index("</table>", html.index('id="usage-table"'))]
    today = timezone.localdate().isoformat()
    [row] = [r for r in usage.split("<tr>") if today in r]
    cells = [c.split("</td>")[0] for c in row.split("<td>")[1:]]
    assert cells == [
        "1",
        "5",
        "0",
        "0",
        "2",
    ]  # ui (the saved repeat), agent (3 + 2 refusals), api, admin, mcp
    assert "api" in usage and ">9<" not in usage  # 40 days ago is out of the window
    refusals = html[html.index('id="refusals-table"') :]
    assert "<code>register_event</code></td><td><code>EVENT_FULL</code></td><td>2</td>" in refusals
    assert "ALREADY_SAVED" not in refusals


def test_mcp_calls_and_refusals_by_connected_agent(staff_client):
    claude = "Claude (claude.ai)"
    event = EventFactory()

    def mcp(name: str, client: str, **data) -> None:
        perform(ACTIONS[name], Caller(visitor=Visitor(), channel=Mode.MCP, client=client), data)

    for _ in range(3):
        mcp("search_events", claude)
    for _ in range(2):
        mcp("register_event", claude, event_id=event.public_id)  # refused: nobody is signed in
    mcp("get_event_details", claude, event_id=event.public_id)
    mcp("search_events", "<b>Evil</b> agent")  # a label is shown as text
    for _ in range(2):
        mcp("search_events", "")  # a personal access token, or nobody signed in
    mcp("register_event", "", event_id=event.public_id)
    actions.call("search_events", visitor=Visitor(), channel="agent")  # not MCP: not in the table
    ActivityFactory(
        mode="mcp", client=claude, created_at=timezone.now() - timedelta(days=40)
    )  # out of the window

    html = staff_client.get(URL).content.decode()
    start = html.index('id="clients-table"')
    table = html[start : html.index("</table>", start)]
    rows = [row.split("</tr>")[0] for row in table.split("<tbody>")[1].split("<tr>")[1:]]
    assert rows == [
        f'<th scope="row">{claude}</th><td>6</td><td>2</td>',
        '<th scope="row"><em>no connected agent (personal token or anonymous)</em></th><td>3</td><td>1</td>',
        '<th scope="row">&lt;b&gt;Evil&lt;/b&gt; agent</th><td>1</td><td>0</td>',
    ]
    assert "Calls by connected agent" in html


def test_the_clients_table_is_translated():
    ActivityFactory(mode="mcp", client="")
    chinese = Client()  # zh-Hant is the site's language
    chinese.force_login(UserFactory(username="organiser", is_staff=True, is_superuser=True))
    html = chinese.get(URL).content.decode()
    assert "依已連結 AI Agent 統計的呼叫次數" in html
    assert "無已連結的 AI Agent（個人存取權杖或未登入）" in html


def test_charts_are_svg_with_a_title_and_paths(staff_client):
    ActivityFactory(action="search_events", mode="agent", outcome="OK")
    import_report(report(revision(), {"SEL-01": "pass"}))
    html = staff_client.get(URL).content.decode()
    assert html.count('<svg class="chart"') == 3
    assert '<path d="M' in html and "<title id=" in html
    assert "<script" not in html.split('id="readiness"')[1]


def test_import_command_counts_a_report_once(tmp_path):
    from io import StringIO

    from django.core.management import call_command

    from readiness.models import EvalRun

    path = tmp_path / "run.json"
    path.write_bytes(report("abc", {"SEL-01": "pass"}))
    out = StringIO()
    call_command("import_eval_report", str(path), stdout=out)
    call_command("import_eval_report", str(path), stdout=out)
    assert EvalRun.objects.count() == 1 and "already imported" in out.getvalue()


def test_a_real_models_pass_rate_per_path_beside_the_smoke_runs_with_its_failing_traces(staff_client):
    """Per revision and path: the model's rate (its runs summed), the smoke run's, the model's name, the
    duration, and each failing case linked to the trace it was recorded with."""
    here = revision()
    import_report(report(here, {"SEL-01": "pass", "WRITE-01": "pass", "NO-01": "pass"}))
    import_report(report(here, {"SEL-01": "pass", "WRITE-01": "pass"}, via="mcp"))
    model = {"started": "2026-11-30T11:00:00Z", "finished": "2026-11-30T11:02:00Z", "mode": "model"}
    import_report(report(here, {"SEL-01": "pass", "WRITE-01": "fail", "NO-01": "pass"}, **model))
    import_report(report(here, {"SEL-01": "error", "WRITE-01": "fail"}, via="mcp", **model))
    import_report(report(here, {"NO-03": "not_applicable"}, via="mcp", **model))
    html = staff_client.get(URL).content.decode()
    table = html[html.index('id="model-runs"') : html.index("</table>", html.index('id="model-runs"'))]
    webmcp, mcp = table.split("<tbody>")[1].split("</tr>")[:2]
    assert "<td>webmcp</td>" in webmcp and "<td>mcp</td>" in mcp
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in webmcp
    assert "67 % (2/3)" in webmcp and "100 % (3/3)" in webmcp  # the model's, then the smoke run's
    assert "0 % (0/2)" in mcp and "100 % (2/2)" in mcp  # not_applicable is not graded
    assert "2 min (40 s a case)" in webmcp
    failing = EvalResult.objects.get(run__mode="model", run__via="webmcp", case="WRITE-01")
    link = f'href="/admin/agent-readiness/trace/{failing.pk}/"'
    assert link in webmcp and "SEL-01" not in webmcp.split("<td>", 6)[-1]
    assert "SEL-01</a> (error)" in mcp and "WRITE-01</a> (fail)" in mcp
    page = staff_client.get(f"/admin/agent-readiness/trace/{failing.pk}/").content.decode()
    assert "expected search_events, got nothing" in page and "save_event" in page
    assert "1200 prompt + 40 completion" in page


def test_the_trace_page_is_staff_only(staff_client):
    import_report(report(revision(), {"SEL-01": "fail"}, mode="model"))
    result = EvalResult.objects.get()
    assert Client().get(f"/admin/agent-readiness/trace/{result.pk}/").status_code == 302
    assert staff_client.get("/admin/agent-readiness/trace/999999/").status_code == 404
