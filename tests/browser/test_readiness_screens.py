"""The agent-readiness dashboard as an organiser sees it, at desktop and phone widths: the charts are
drawn (SVG paths with data), nothing fails in the console, screenshots for a person to look at."""

import pytest
from django.conf import settings

from readiness.reports import import_report
from tests.factories import ActivityFactory, UserFactory
from tests.readiness.test_dashboard import report

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1280, 390])
def test_the_dashboard_draws_its_charts_without_console_errors(browser, server, orm, width):
    from core.revision import revision

    organiser = UserFactory(username=f"organiser-{width}", is_staff=True, is_superuser=True)
    for mode in ("ui", "agent", "mcp"):
        ActivityFactory(action="search_events", mode=mode, outcome="OK")
    ActivityFactory(action="register_event", mode="agent", outcome="EVENT_FULL")
    earlier = report(
        "an-earlier-revision", {"SEL-01": "pass", "WRITE-01": "pass"}, started="2026-11-01T10:00:00Z"
    )
    import_report(earlier, source="browser")
    import_report(report(revision(), {"SEL-01": "pass", "WRITE-01": "fail"}), source="browser")

    from django.test import Client

    client = Client()
    client.force_login(organiser)
    context = browser.new_context(viewport={"width": width, "height": 900}, locale="en-US")
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": server}])
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    try:
        page.goto(f"{server}/admin/agent-readiness/")
        charts = page.locator("svg.chart")
        assert charts.count() == 3
        drawn = page.evaluate(
            "() => [...document.querySelectorAll('svg.chart')].map(svg => "
            "[...svg.querySelectorAll('path')].filter(p => (p.getAttribute('d') || '').length > 10"
            " && p.getBBox().width > 0).length)"
        )
        assert all(count > 0 for count in drawn), drawn
        assert page.locator("#regressions").inner_text().startswith("WRITE-01")
        shots = settings.BASE_DIR / "screenshots"
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / f"agent-readiness-{width}.png"), full_page=True)
        assert problems == []
    finally:
        context.close()
