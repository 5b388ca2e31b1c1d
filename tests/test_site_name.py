"""The site's name is said once (settings.SITE_NAME): the pages' title and brand, the 500 and 503 pages,
the calendar files' PRODID and the password reset mail (both languages) follow the setting, and no
template or Python file outside the settings writes the name out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from django.core import mail
from django.db import OperationalError
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings
from icalendar import Calendar

from core import errorpages
from core.middleware import DatabaseUnavailableMiddleware
from events.mail import ics
from tests.factories import EventFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

NAME = "Taipei Meetup Hub"
LITERAL = "AgentReady Events"

#: Lines that may still say the name (a file, a part of the line): its one definition, a docstring's
#: example of a feed's name.
ALLOWED = {
    ("config/settings.py", 'SITE_NAME = "AgentReady Events"'),
    ("events/web/feeds.py", 'conditions, e.g. "AgentReady Events: Taipei · Free'),
}
#: Not the project's own source: tools, packages, generated output, the docs and these tests.
SKIPPED_DIRS = {".git", ".venv", ".tools", "node_modules", "__pycache__", ".hypothesis", "docs", "tests"}
SKIPPED_PATHS = {"evals/reports", "bench/results", "staticfiles", "static-build"}


@override_settings(SITE_NAME=NAME)
@pytest.mark.parametrize("url", ["/events/", "/accounts/login/"])
def test_the_title_brand_and_footer_say_the_setting(url):
    """The sign-in page too, whose view (Django's LoginView) calls the request's host `site_name`."""
    html = Client(headers={"Accept-Language": "en"}).get(url).content.decode()
    assert f"· {NAME}</title>" in html
    assert '<span class="brand-name" translate="no">Taipei Meetup <span>Hub</span></span>' in html
    assert f"<p><strong>{NAME}</strong> · " in html
    assert LITERAL not in html and "testserver</" not in html


@override_settings(SITE_NAME="Gatherly")
def test_a_one_word_name_is_the_brand_whole():
    html = Client(headers={"Accept-Language": "en"}).get("/accounts/login/").content.decode()
    assert '<span class="brand-name" translate="no"><span>Gatherly</span></span>' in html


@override_settings(SITE_NAME=NAME)
def test_the_500_and_503_pages_say_the_setting_without_a_request_context():
    request = RequestFactory().get("/events/")
    error = errorpages.server_error(request)
    assert error.status_code == 500
    assert f"<title>{NAME}</title>" in error.content.decode()

    def unreachable(request) -> HttpResponse:
        raise AssertionError("not called")

    down = DatabaseUnavailableMiddleware(unreachable).process_exception(request, OperationalError("down"))
    assert down is not None and down.status_code == 503
    assert f"<title>{NAME}</title>" in down.content.decode()


def test_the_calendar_prodid_names_the_site_and_keeps_its_product_id():
    event = EventFactory()
    assert str(Calendar.from_ical(ics.event_calendar(event))["PRODID"]) == (
        f"-//{settings.SITE_NAME}//agentready-events//EN"
    )
    with override_settings(SITE_NAME=NAME):
        calendar = Calendar.from_ical(ics.event_calendar(event))
    assert str(calendar["PRODID"]) == f"-//{NAME}//agentready-events//EN"
    assert str(next(iter(calendar.walk("VEVENT")))["UID"]) == f"{event.public_id}@agentready-events"


@override_settings(SITE_NAME=NAME)
@pytest.mark.parametrize(
    ("language", "subject", "sentence"),
    [
        ("en", f"Reset your {NAME} password", f"the password of your {NAME} account"),
        ("zh-hant", f"重設你的 {NAME} 密碼", f"有人申請重設你在 {NAME} 的帳號密碼"),
    ],
)
def test_the_password_reset_mail_says_the_setting_not_the_host(user, language, subject, sentence):
    response = Client(headers={"Accept-Language": language}).post(
        "/accounts/password_reset/", {"email": user.email}
    )
    assert response.status_code == 302
    [message] = mail.outbox
    assert message.subject == subject
    assert sentence in message.body
    assert message.body.rstrip().endswith(NAME)
    assert "testserver" not in message.subject and LITERAL not in message.body


@override_settings(SITE_NAME=NAME)
@pytest.mark.parametrize(("language", "header"), [("en", f"{NAME} admin"), ("zh-hant", f"{NAME} 管理後台")])
def test_the_admin_header_and_title_say_the_setting(admin_client, language, header):
    html = admin_client.get("/admin/", headers={"Accept-Language": language}).content.decode()
    assert f'<a href="/admin/">{header}</a>' in html
    assert f"| {header}</title>" in html
    assert LITERAL not in html


def project_sources() -> list[Path]:
    """The project's Python files and every file under templates/."""
    base = Path(settings.BASE_DIR)
    found = []
    for folder, dirs, files in os.walk(base):
        here = Path(folder)
        dirs[:] = [
            name
            for name in dirs
            if name not in SKIPPED_DIRS
            and not name.startswith(".")  # the environment, the tools, the caches, a peer's venv
            and (here / name).relative_to(base).as_posix() not in SKIPPED_PATHS
        ]
        in_templates = here.relative_to(base).parts[:1] == ("templates",)
        found += [here / name for name in files if in_templates or name.endswith(".py")]
    return found


def test_no_template_or_python_file_but_the_settings_writes_the_name():
    base = Path(settings.BASE_DIR)
    sources = project_sources()
    assert base / "templates" / "base.html" in sources and base / "events" / "mail" / "ics.py" in sources
    written = [
        (path.relative_to(base).as_posix(), line.strip())
        for path in sources
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if LITERAL in line or "AgentReady <span>" in line
    ]
    unexpected = [
        (path, line)
        for path, line in written
        if not any(path == allowed_path and part in line for allowed_path, part in ALLOWED)
    ]
    assert unexpected == []
