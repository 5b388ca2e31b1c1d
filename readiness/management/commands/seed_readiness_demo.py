"""`manage.py seed_readiness_demo`: thirty days of made-up usage and two eval runs, so the dashboard of
the demo site (`make run`) shows something. Safe to run again: what it made before is replaced.

The rows say what they are: activity with the visitor token `demo-readiness`, eval runs whose report
is `demo data`. Never run it on a real site.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, time, timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone

from core.revision import revision
from events.activity import recount
from events.models import Activity
from readiness.models import EvalRun
from readiness.reports import import_report

TOKEN = "demo-readiness"
SOURCE = "demo data"
CALLS = {"ui": 40, "agent": 18, "api": 9, "mcp": 6, "admin": 1}  # per day, roughly
REFUSALS = [
    ("register_event", "EVENT_FULL"),
    ("register_event", "SIGN_IN_REQUIRED"),
    ("join_waitlist", "SEATS_AVAILABLE"),
    ("search_events", "VALIDATION_ERROR"),
    ("save_event", "INSUFFICIENT_SCOPE"),
]
CASES = {
    "SEL": 4,
    "ARG": 7,
    "ORD": 3,
    "NO": 4,
    "RECOVERY": 2,
    "WRITE": 10,
    "AUTH": 2,
    "NAV": 2,
}


class Command(BaseCommand):
    help = "Made-up activity and eval runs for the demo site's agent-readiness dashboard."

    def handle(self, **options) -> None:
        rng = random.Random(2027)
        Activity.objects.filter(visitor_token=TOKEN).delete()
        EvalRun.objects.filter(source=SOURCE).delete()
        tz = timezone.get_default_timezone()
        today = timezone.localdate(timezone=tz)
        rows = []
        for days_ago in range(30):
            day = today - timedelta(days=days_ago)
            growth = 1 + (29 - days_ago) / 30  # agents are on the rise
            for mode, base in CALLS.items():
                for _ in range(
                    int(base * (growth if mode in ("agent", "mcp") else 1) * rng.uniform(0.6, 1.2))
                ):
                    when = timezone.make_aware(
                        datetime.combine(day, time(rng.randrange(8, 23), rng.randrange(60))), tz
                    )
                    action, outcome = (
                        rng.choice(REFUSALS)
                        if rng.random() < 0.12
                        else (rng.choice(["search_events", "get_event_details", "save_event"]), "OK")
                    )
                    rows.append(
                        Activity(
                            action=action, mode=mode, outcome=outcome, visitor_token=TOKEN, created_at=when
                        )
                    )
        Activity.objects.bulk_create(rows, batch_size=1000)
        # Written in bulk, and the rows deleted above were counted: count them all again (this runs
        # before the demo site's server and worker start, so nothing writes meanwhile).
        recount()
        here = revision()
        previous = f"{here[:7]}~1" if here not in ("", "unknown") else "previous"
        for rev, failing, started in ((previous, set(), 2), (here, {"ARG-05"}, 1)):
            import_report(_report(rev, failing, timezone.now() - timedelta(hours=started)), source=SOURCE)
        self.stdout.write(
            f"Demo readiness data: {len(rows)} activity rows, 2 eval runs ({previous}, {here[:12]})."
        )


def _report(rev: str, failing: set[str], started: datetime) -> bytes:
    stamp = started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    health = {"revision": rev, "toolCatalogueFingerprint": "demo"}
    cases = [
        {
            "name": f"{category}-{n:02d}",
            "category": category,
            "case": {"meta": {"route": "/events/"}},
            "outcome": "fail" if f"{category}-{n:02d}" in failing else "pass",
            "reasons": ["demo: the model dropped a filter after zero results"]
            if f"{category}-{n:02d}" in failing
            else [],
        }
        for category, count in CASES.items()
        for n in range(1, count + 1)
    ]
    return json.dumps(
        {
            "kind": "agentready-evals-report",
            "formatVersion": 1,
            "mode": "smoke",
            "via": "webmcp",
            "startedAt": stamp,
            "finishedAt": stamp,
            "health": {"start": health, "end": health},
            "totals": {},
            "cases": cases,
        }
    ).encode()
