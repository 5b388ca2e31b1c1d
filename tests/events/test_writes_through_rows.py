"""Writes only through rows: no view, admin class or management command changes a domain model (a row an
action changes) other than through `perform`, so every such change has its Activity row.

An AST check of the interfaces' source (ARCHITECTURE.md, "Where each rule lives"): import-linter
cannot see it, since an interface may import the models to read them. It finds each call that writes:
a model method (`save`, `delete`) on anything, a queryset or manager write (`update`, `create`,
`get_or_create`, `update_or_create`, `bulk_create`, `bulk_update`, `delete`) on a chain that starts at
a domain model, and the admin's stock saves (`super().save_model`, `delete_model`, `delete_queryset`,
a form's or formset's `save()` that commits). The one declared exception is the demo loader, which
fills an empty catalogue as fixtures do.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.apps import apps

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
}
#: The interfaces: people's pages, tool calls, REST, the admin, the commands (events' own, and the
#: other apps' interfaces, which may touch the domain's rows only through the actions too).
INTERFACES = [
    "events/web/*.py",
    "events/agent/*.py",
    "events/api/*.py",
    "events/admin.py",
    "events/management/commands/*.py",
    "events/templatetags/*.py",
    "accounts/views.py",
    "accounts/api.py",
    "accounts/admin.py",
    "accounts/oauth/views.py",
    "config/*.py",
    "readiness/*.py",
]
#: Fixtures, not an interface: `seed_demo` loads the demo catalogue into an empty database.
DECLARED_EXCEPTIONS = {"events/management/commands/seed_demo.py"}

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
ADMIN_SAVES = {"save_model", "delete_model", "delete_queryset"}


def _files() -> list[Path]:
    found = {path for pattern in INTERFACES for path in ROOT.glob(pattern)}
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


def writes_around_the_rows(source: str, *, events: bool = True) -> list[str]:
    """Each call in `source` that writes a domain model other than through an action, as "line: code".
    `events`: an interface of the events app, where every model is the domain's, so any `save()` or
    `delete()` is one; elsewhere (accounts' sign-up saves its User) only chains from a domain model."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        method, receiver = node.func.attr, node.func.value
        root = _root(receiver)
        by_super = isinstance(root, ast.Name) and root.id == "super"
        if by_super and method in ADMIN_SAVES:
            bad = True
        elif isinstance(root, ast.Name) and root.id in DOMAIN:
            bad = method in QUERY_WRITES or method in MODEL_WRITES
        elif not events:
            bad = False
        elif method == "save":
            bad = _commits(node)  # an instance, a form, a formset: whatever it saves is saved around a row
        else:
            bad = method == "delete" and not by_super
        if bad:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_domain_models_exist():
    assert {model.__name__ for model in apps.get_app_config("events").get_models()} >= DOMAIN


@pytest.mark.parametrize("path", _files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_interface_writes_a_domain_model_around_the_rows(path):
    events = path.relative_to(ROOT).parts[0] == "events"
    assert writes_around_the_rows(path.read_text(encoding="utf-8"), events=events) == []


@pytest.mark.parametrize(
    "code",
    [
        "EventStaff.objects.filter(event=event).delete()",
        "CalendarFeed.objects.update_or_create(user=user, defaults={})",
        "Event.objects.filter(pk=1).update(status='cancelled')",
        "event.save()",
        "formset.save()",
        "def save_model(self, request, obj, form, change):\n    super().save_model(request, obj, form, True)",
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
    ],
)
def test_the_check_leaves_reads_and_actions_alone(code):
    assert writes_around_the_rows(code) == []
