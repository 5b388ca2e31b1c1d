"""Registration questions: what answers cost a registration write, and what a form of questions costs
the event's page.

The write: SQL statements of one `POST /api/events/<id>/registration` (the rush's route) with the
answers to 0, 3 and 20 questions and a paid ticket type, counted in-process (bench.tasks
question-queries). The page: an event asking 20 questions and the same event asking none
(bench.tasks QUESTION_PAGES, both selling the same two paid types), for a signed-in person (the form
with its fields is drawn for them: an anonymous visitor is asked to sign in), alternating in one wrk
run on the main server.
"""

from __future__ import annotations

import json

from bench import load
from bench.figures.pages import get
from bench.infra import BenchError, Server, log
from bench.session import Session
from bench.tables import verdict

NAME = "questions"
TARGETS = {"write_with_answers_queries": 7, "questions_page_ratio": 0.8}
PAGES = {"none": "/events/evt-bench-questions-0/", "twenty": "/events/evt-bench-questions-20/"}
#: What the page with 20 questions shows and the other does not: the last question's field.
LAST_FIELD = b'name="answers-q20"'  # events.forms.ANSWER_PREFIX


def measure(server: Server, session: Session, url: str, profile: dict) -> dict:
    log("questions: statements per registration write with 0, 3 and 20 answers (in-process)")
    writes = session.task(url, "question-queries", timeout=300, ALLOWED_HOSTS="127.0.0.1,testserver")
    log(f"  statements {writes['counts']}")
    setup = json.loads((session.workdir / "sessions.json").read_text())
    # The last person of the setup: signed in, registered for neither event (the rush is not run yet,
    # and its people register only for the rush events).
    cookie = f"{setup['session_cookie']}={setup['sessions'][-1]}; {setup['csrf_cookie']}={load.CSRF}"
    headers = {"Cookie": cookie}
    for name, path in [*PAGES.items()] * 4:  # each worker's first page compiles its templates (seconds)
        status, _, body = get(server.base_url + path, headers)
        if status != 200 or b'id="register-form"' not in body or (LAST_FIELD in body) != (name == "twenty"):
            raise BenchError(f"{path} did not draw its registration form ({status}): {body[:300]!r}")
    log(f"questions: event page with 20 questions vs none, signed in, {profile['connections']} connections")
    logged_before = len(server.errors_logged())
    slices = load.alternate(
        {name: server.base_url + path for name, path in PAGES.items()},
        rounds=profile["rounds"],
        seconds=profile["slice_s"],
        connections=profile["connections"],
        threads=2,
        warmup=max(profile["warmup_s"], 2.0),
        headers={name: headers for name in PAGES},
    )
    sides = {name: load.summarize(items) for name, items in slices.items()}
    logged = server.errors_logged()[logged_before:]
    ratio = round(sides["twenty"]["rate"] / sides["none"]["rate"], 3)
    log(f"  {sides['twenty']['rate']:.0f} vs {sides['none']['rate']:.0f} req/s ({ratio})")
    return {
        "writes": writes,
        "write_queries": max(writes["counts"].values()),
        "write_constant": writes["constant"],
        "pages": PAGES,
        "sides": sides,
        "questions_page_ratio": ratio,
        "errors": sum(side["errors"] for side in sides.values()) + len(logged),
        "server_errors_logged": logged[:10],
    }


def rows(q: dict) -> list[tuple[str, str, str, str]]:
    counts = q["writes"]["counts"]
    rate = {name: side["rate"] for name, side in q["sides"].items()}
    ok = q["errors"] == 0
    return [
        (
            "SQL statements per registration write with answers and a paid ticket type (REST, 0 / 3 / 20 "
            "questions)",
            " / ".join(str(counts[n]) for n in ("0", "3", "20"))
            + f", {'constant' if q['write_constant'] else 'NOT constant'} in the questions",
            f"constant, ≤ {TARGETS['write_with_answers_queries']}",
            verdict(q["write_constant"] and q["write_queries"] <= TARGETS["write_with_answers_queries"]),
        ),
        (
            "event page with 20 questions ÷ with none, throughput, signed in",
            f"{q['questions_page_ratio']:.2f} ({rate['twenty']:.0f} vs {rate['none']:.0f} req/s)",
            f"≥ {TARGETS['questions_page_ratio']}",
            verdict(q["questions_page_ratio"] >= TARGETS["questions_page_ratio"] and ok),
        ),
    ]


def failures(q: dict) -> list[str]:
    found = []
    if not q["write_constant"]:
        found.append(
            f"questions: a registration write's statements grow with its answers {q['writes']['counts']}"
        )
    if q["errors"]:
        found.append(
            f"questions: {q['errors']} failed requests or server errors {q['server_errors_logged'][:2]}"
        )
    return found


def notes(q: dict) -> list[str]:
    control = q["writes"]["transaction_control"]
    return [
        f"questions: a registration write with answers is {q['write_queries']} statements (and "
        f"{max(control.values())} of transaction control); its answers are in the registration's row and "
        "its questions in the event's (`Event.question_form`), read by the statement that reads its seats"
    ]
