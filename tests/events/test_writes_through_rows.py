"""Writes only through rows: no view, admin class, management command, task, signal or code of the
accounts app changes a domain model (a row an action changes) other than through `perform` or a
declared system path, so every such change has its Activity row.

An AST check of the source (ARCHITECTURE.md, "Where each rule lives"): import-linter cannot see it,
since a module may import the models to read them. It finds each call that writes:

- a model method (`save`, `delete`) on anything (in the events app; elsewhere on a domain model), a
  queryset or manager write (`update`, `create`, `get_or_create`, `update_or_create`, `bulk_create`,
  `bulk_update`, `delete`) on a chain that starts at a domain model, and the admin's stock saves
  (`super().save_model`, `delete_model`, `delete_queryset`, a form's or formset's `save()` that commits);
- a call of a write use case outside the actions: any function of `events.services` (a module or a
  name imported from it), and the outbox's `notify` and `send_again`.

A write passes when it is inside `with recorded_write(...)` (`events.actions`: another app's use case
whose writes and Activity row commit together, its name in `DECLARED_WRITES`), or in a function this
file declares below with its reason. Everything else goes through `perform` (the worker's tasks as
the declared system actor, `events.actions.system_caller`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.apps import apps

from events.actions import ACTIONS, DECLARED_WRITES

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]

#: The models whose rows the actions change (a payment, later, too). Each must exist.
DOMAIN = {
    "Event",
    "Registration",
    "EventStaff",
    "SavedEvent",
    "WaitlistEntry",
    "CheckIn",
    "CalendarFeed",
    "Notification",
    "VisitorState",
    "Question",
    "QuestionOption",
    "TicketType",
    "BankStatementRow",
}
#: The events app's other models, each with why no action changes its rows. A new model must be put
#: in one set or the other (`test_every_model_is_sorted`).
NOT_DOMAIN = {
    "RetiredEventId": "written by a signal when an event is deleted, which the site never does (fixtures)",
    "Activity": "the record itself",
    "ActivityCount": "the record's day counts, kept by events.activity",
}
#: Where a write may start: people's pages, tool calls, REST, the admin, the commands, the worker's
#: tasks, the signals, and the accounts app (its pages, API, admin, use cases and tasks).
PATHS = [
    "events/web/*.py",
    "events/agent/*.py",
    "events/api/*.py",
    "events/admin.py",
    "events/management/commands/*.py",
    "events/templatetags/*.py",
    "events/tasks.py",
    "events/mail/*.py",
    "events/signals.py",
    "accounts/*.py",
    "accounts/oauth/*.py",
    "accounts/management/commands/*.py",
    "core/tasks.py",
    "config/*.py",
    "readiness/*.py",
    "readiness/management/commands/*.py",
    "ops/management/commands/*.py",
]
#: Fixtures, not an interface: `seed_demo` loads the demo catalogue into an empty database.
DECLARED_EXCEPTIONS = {"events/management/commands/seed_demo.py"}
#: Functions that write a domain row without an action row of their own, each with its reason.
DECLARED_SYSTEM_PATHS = {
    ("events/mail/outbox.py", name): "the outbox's delivery: each attempt is recorded on the e-mail's own "
    "row (status, attempts, error), the record of a mail; the change that queued it has its Activity row"
    for name in ("open_and_deliver", "deliver", "_claim", "_record_failure", "_end")
} | {
    ("events/mail/outbox.py", "send_again"): "part of the row `resend_notification` (its only caller)",
    ("events/tasks.py", "tell_expired_payments"): "the e-mails of the expiries that the row "
    "`expire_payments` recorded (it queues this task once per batch); each mail's row is its record",
    ("events/tasks.py", "queue_payment_reminders"): "the payment sweep's reminders before it performs "
    "`expire_payments`: each mail's row is its record, once per registration and deadline (its key)",
    ("events/management/commands/recount_seats.py", "handle"): "the operator's repair of a derived "
    "counter (`seats_taken`, from the rows) after a bulk load: it changes no fact, so nothing to record",
}

MODEL_WRITES = {"save", "delete"}
QUERY_WRITES = {
    "update",
    "create",
    "get_or_create",
    "update_or_create",
    "bulk_create",
    "bulk_update",
    "delete",
}
ADMIN_SAVES = {"save_model", "delete_model", "delete_queryset", "save_formset"}
OUTBOX_WRITES = {"notify", "send_again"}


def _files() -> list[Path]:
    found = {path for pattern in PATHS for path in ROOT.glob(pattern)}
    return sorted(path for path in found if str(path.relative_to(ROOT)) not in DECLARED_EXCEPTIONS)


def _root(node: ast.expr) -> ast.expr:
    """The start of a chain like `EventStaff.objects.filter(…).delete`."""
    while True:
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return node


def _commits(call: ast.Call) -> bool:
    return not any(
        keyword.arg == "commit" and isinstance(keyword.value, ast.Constant) and keyword.value.value is False
        for keyword in call.keywords
    )


def _use_case_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names a module binds to the write use cases (`events.services` and what it holds) and to
    the outbox module."""
    services, outbox = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = (node.module or "").removeprefix(
                "events."
            )  # `events.services`, `.services`, `..services`
            bound = {alias.name: alias.asname or alias.name for alias in node.names}
            if module == "services" or module.startswith("services."):
                services |= set(bound.values())
            elif module == "mail" and "outbox" in bound:
                outbox.add(bound["outbox"])
            elif module in ("mail.outbox", "outbox"):
                services |= {name for original, name in bound.items() if original in OUTBOX_WRITES}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("events.services"):
                    services.add(alias.asname or alias.name.split(".")[0])
    return services, outbox


class _Finder(ast.NodeVisitor):
    def __init__(self, *, events: bool, services: set[str], outbox: set[str]) -> None:
        self.events, self.services, self.outbox = events, services, outbox
        self.function = ""
        self.recorded = 0
        self.found: list[tuple[str, str]] = []  # (function, "line: code")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.function = self.function, self.function or node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_With(self, node: ast.With) -> None:
        declared = any(
            isinstance(item.context_expr, ast.Call)
            and isinstance(_root(item.context_expr.func), ast.Name)
            and ast.unparse(item.context_expr.func).split(".")[-1] == "recorded_write"
            for item in node.items
        )
        self.recorded += declared
        self.generic_visit(node)
        self.recorded -= declared

    def visit_Call(self, node: ast.Call) -> None:
        if self._writes(node) and not self.recorded:
            self.found.append((self.function, f"{node.lineno}: {ast.unparse(node)}"))
        self.generic_visit(node)

    def _writes(self, node: ast.Call) -> bool:
        if isinstance(node.func, ast.Name):
            return node.func.id in self.services  # a use case imported by name
        if not isinstance(node.func, ast.Attribute):
            return False
        method, receiver = node.func.attr, node.func.value
        root = _root(receiver)
        by_super = isinstance(root, ast.Name) and root.id == "super"
        if isinstance(root, ast.Name) and root.id in self.services:
            return True  # `saves.merge_saved_events(…)`: a use case of a services module
        if isinstance(root, ast.Name) and root.id in self.outbox:
            return method in OUTBOX_WRITES
        if by_super and method in ADMIN_SAVES:
            return True
        if isinstance(root, ast.Name) and root.id in DOMAIN:
            return method in QUERY_WRITES or method in MODEL_WRITES
        if not self.events:
            return False
        if method == "save":
            return _commits(node)  # an instance, a form, a formset: whatever it saves is saved around a row
        return method == "delete" and not by_super


def writes_around_the_rows(source: str, *, events: bool = True, path: str = "") -> list[str]:
    """Each call in `source` that writes a domain model other than through an action or a declared
    path, as "line: code". `events`: a module of the events app, where every model is the domain's,
    so any `save()` or `delete()` is one; elsewhere (accounts' sign-up saves its User) only chains
    from a domain model."""
    tree = ast.parse(source)
    services, outbox = _use_case_names(tree)
    finder = _Finder(events=events, services=services, outbox=outbox)
    finder.visit(tree)
    return [code for function, code in finder.found if (path, function) not in DECLARED_SYSTEM_PATHS]


def test_the_domain_models_exist_and_every_model_is_sorted():
    models = {model.__name__ for model in apps.get_app_config("events").get_models()}
    assert models >= DOMAIN
    assert models == DOMAIN | set(NOT_DOMAIN), "put each new model in DOMAIN or NOT_DOMAIN (with why)"


def test_the_declared_paths_exist():
    for path, function in DECLARED_SYSTEM_PATHS:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert function in {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert not set(DECLARED_WRITES) & set(ACTIONS), "a declared write is not also an action row"


def test_send_again_has_one_caller_the_row_resend_notification():
    calls = re.compile(r"(?<!def )send_again\(")
    site = [
        path
        for app in ("accounts", "config", "core", "events", "readiness")
        for path in (ROOT / app).rglob("*.py")
    ]
    callers = [str(path.relative_to(ROOT)) for path in site if calls.search(path.read_text("utf-8"))]
    assert sorted(callers) == ["events/services/organiser.py"]


@pytest.mark.parametrize("path", _files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_code_path_writes_a_domain_model_around_the_rows(path):
    relative = path.relative_to(ROOT)
    events = relative.parts[0] == "events"
    source = path.read_text(encoding="utf-8")
    assert writes_around_the_rows(source, events=events, path=str(relative)) == []


@pytest.mark.parametrize(
    "code",
    [
        "EventStaff.objects.filter(event=event).delete()",
        "CalendarFeed.objects.update_or_create(user=user, defaults={})",
        "Event.objects.filter(pk=1).update(status='cancelled')",
        "event.save()",
        "formset.save()",
        "def save_model(self, request, obj, form, change):\n    super().save_model(request, obj, form, True)",
        "def save_formset(self, request, form, fs, change):\n    super().save_formset(request, form, fs, 1)",
        "from events.services import saves\nsaves.merge_saved_events(token=token, user=user)",
        "from .services.waitlist import process_waitlists\nprocess_waitlists()",
        "from .mail import outbox\noutbox.notify(kind, user=user, event=event, cause='x')",
        "def deliver():\n    Notification.objects.filter(pk=1).update(status='sent')",  # not declared here
        "with other_context():\n    SavedEvent.objects.filter(user=user).delete()",
    ],
)
def test_the_check_finds_each_kind_of_write(code):
    assert writes_around_the_rows(code) != []


@pytest.mark.parametrize(
    "code",
    [
        "formset.save(commit=False)",
        "context.update(result=1)",
        "perform(ACTIONS['add_event_staff'], caller, data)",
        "Event.objects.filter(pk=1).exists()",
        "request.session.pop('key', None)",
        "with recorded_write('delete_account', caller):\n    SavedEvent.objects.filter(user=user).delete()",
        "with recorded_write('edit_questions', caller):\n    super().save_formset(request, form, fs, True)",
        "from .mail import outbox\noutbox.build(1)",
    ],
)
def test_the_check_leaves_reads_actions_and_declared_writes_alone(code):
    assert writes_around_the_rows(code) == []


def test_a_declared_system_path_is_left_alone_only_in_its_own_file():
    code = "def deliver():\n    Notification.objects.filter(pk=1).update(status='sent')"
    assert writes_around_the_rows(code, path="events/mail/outbox.py") == []
    assert writes_around_the_rows(code, path="events/mail/other.py") != []
