"""zh-Hant everywhere a person looks: the admin (every registered model's list, add and change pages,
with their history and delete pages) and every page of the site show no English label, and our
catalogues leave nothing untranslated.

The English a page must not show is read from the catalogues and the code, never listed here: every
msgid of Django's and the installed apps' catalogues (.po), the gettext calls in the installed apps'
Python (django-tasks-db and django-oauth-toolkit ship no catalogue at all), every msgid of ours, and
the English names Django makes from the code, which no catalogue reaches (app, model and field names,
the admin's columns, filters and actions). A visible text equal to one of them, or to a msgid with its
placeholders filled in, is a string left in English. Text in an element that says it is in another
language (`lang="en"`: the language switcher's "English") or not to be translated (`translate="no"`:
the product's name) is meant so. The test's own data is in Chinese, so an English text is a label."""

from __future__ import annotations

import ast
import json
import re
import sysconfig
import uuid
from collections.abc import Iterable, Iterator
from datetime import timedelta
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import django
import polib
import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.contrib.admin.utils import label_for_field
from django.contrib.auth.models import Group
from django.test import Client, RequestFactory
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone, translation
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)

from accounts.tokens import create_access_token
from events.choices import NotificationKind, StaffRole
from events.mail.messages import unsubscribe_token
from events.models import BankStatementRow, CheckIn, EventStaff, Notification
from events.tasks import sweep_waitlists
from tests.factories import (
    ActivityFactory,
    EventFactory,
    QuestionFactory,
    QuestionOptionFactory,
    RegistrationFactory,
    SavedEventFactory,
    TicketTypeFactory,
    UserFactory,
    WaitlistEntryFactory,
)
from tests.oauth import LOOPBACK_REDIRECT, pkce

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ZH = {"Accept-Language": "zh-Hant"}
PASSWORD = "correct-horse-battery"  # the factories' (tests/factories.py)
#: Our catalogues: the site's own strings, then what the installed apps' catalogues lack.
OUR_CATALOGUES = sorted(
    po_file
    for locale_dir in settings.LOCALE_PATHS
    for po_file in Path(locale_dir).glob("zh_Hant/LC_MESSAGES/*.po")
)
DJANGO_DIR = Path(django.__file__).parent
SITE_PACKAGES = Path(sysconfig.get_paths()["purelib"]).resolve()
#: gettext's functions and where their msgids are among the arguments (what xgettext reads).
GETTEXT_CALLS = {
    "_": (0,),
    "gettext": (0,),
    "gettext_lazy": (0,),
    "gettext_noop": (0,),
    "ngettext": (0, 1),
    "ngettext_lazy": (0, 1),
    "pgettext": (1,),
    "pgettext_lazy": (1,),
    "npgettext": (1, 2),
    "npgettext_lazy": (1, 2),
}
#: English a zh-Hant page may show, whole, and why: each is a msgid or a code name somewhere.
ALLOWED_ENGLISH = {
    "API": "a word zh-Hant uses as it is (our msgid, translated as itself)",
    "MCP": "the protocol's name",
    "OAuth": "the protocol's name",
    "WebMCP": "the standard's name",
}
PLACEHOLDER = re.compile(r"%\([^)]+\)[-#0 +]*\d*(?:\.\d+)?[sdifr]|%[sdifr]|\{\w*\}")
ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


# ── The English that must not show ─────────────────────────────────────────────────────────────


def catalogue_msgids(po_file: Path) -> set[str]:
    return {
        text
        for entry in polib.pofile(str(po_file))
        if not entry.obsolete
        for text in (entry.msgid, entry.msgid_plural)
        if text
    }


def english_catalogue(package: Path) -> Path | None:
    """A package's English catalogue (every msgid), else any one of its languages'."""
    english = package / "locale" / "en" / "LC_MESSAGES" / "django.po"
    if english.exists():
        return english
    return next(iter(sorted(package.glob("locale/*/LC_MESSAGES/django.po"))), None)


def gettext_msgids(package: Path) -> set[str]:
    """The literal msgids of the gettext calls in a package's Python: what its catalogue would hold."""
    found = set()
    for source in package.rglob("*.py"):
        if {"tests", "migrations"} & set(source.relative_to(package).parts):
            continue
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None) or ""
                arguments = [node.args[i] for i in GETTEXT_CALLS.get(name, ()) if i < len(node.args)]
                found |= {
                    a.value for a in arguments if isinstance(a, ast.Constant) and isinstance(a.value, str)
                }
    return found


def installed_packages() -> list[Path]:
    """Django's own catalogue and its contrib apps', and each installed app from site-packages."""
    paths = {Path(config.path) for config in apps.get_app_configs()}
    return [DJANGO_DIR / "conf", *sorted(p for p in paths if SITE_PACKAGES in p.resolve().parents)]


@cache
def third_party_msgids() -> frozenset[str]:
    found: set[str] = set()
    for package in installed_packages():
        catalogue = english_catalogue(package)
        if catalogue is not None:
            found |= catalogue_msgids(catalogue)
        if package != DJANGO_DIR / "conf" and DJANGO_DIR not in package.parents:
            found |= gettext_msgids(package)  # Django's catalogues are complete; theirs may be old
    return frozenset(found)


@cache
def our_msgids() -> frozenset[str]:
    return frozenset(text for po_file in OUR_CATALOGUES for text in catalogue_msgids(po_file))


def code_names(request) -> set[str]:
    """The English names Django makes from the code for what the admin shows: apps, models, fields
    (a name made from an attribute, or a plain string, reaches no catalogue), the admin's columns,
    filters and actions."""
    names: set[str] = set()
    with translation.override("en"):
        for config in apps.get_app_configs():
            names.add(str(config.verbose_name))
            for model in config.get_models():
                names |= {str(model._meta.verbose_name), str(model._meta.verbose_name_plural)}
                names |= {str(f.verbose_name) for f in model._meta.get_fields() if hasattr(f, "verbose_name")}
        for model, model_admin in admin.site._registry.items():
            for column in [*model_admin.list_display, *model_admin.get_readonly_fields(request)]:
                if column != "__str__":
                    names.add(str(label_for_field(column, model, model_admin)))
            names |= {str(each.title) for each in model_admin.list_filter if hasattr(each, "title")}
            names |= {str(description) for _name, description in model_admin.get_action_choices(request, [])}
    return names


def placeholder_pattern(msgid: str) -> str | None:
    """A regular expression for the msgid with its placeholders filled in; None if it has none."""
    parts = PLACEHOLDER.split(msgid)
    if len(parts) == 1:
        return None
    return "(?:.+?)".join(re.escape(part.replace("%%", "%")) for part in parts)


class EnglishLabels:
    """Whether a visible text is one of the English strings: whole, case aside (the admin
    capitalises), a label's colon aside, placeholders filled in with anything."""

    def __init__(self, msgids: Iterable[str]) -> None:
        self.plain: set[str] = set()
        patterns = []
        for msgid in msgids:
            text = normalise(msgid)
            if not ENGLISH_WORD.search(PLACEHOLDER.sub("", text)):
                continue  # "%s", "…", "%(a)s: %(b)s": no English words of its own
            pattern = placeholder_pattern(text)
            if pattern is None:
                self.plain.add(text.casefold())
            else:
                patterns.append(pattern)
        self.filled = re.compile("|".join(f"(?:{p})" for p in sorted(patterns)), re.IGNORECASE | re.DOTALL)

    def __contains__(self, text: str) -> bool:
        return text.casefold() in self.plain or self.filled.fullmatch(text) is not None


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(":：").strip()


# ── What a person sees ─────────────────────────────────────────────────────────────────────────


class VisibleText(HTMLParser):
    """The text of a page that a person reads or hears: text nodes, and the attributes shown or
    spoken (title, placeholder, alt, aria-label, a button's value); not scripts, styles or
    templates, nor what is marked as another language or not to be translated."""

    UNSEEN = {"script", "style", "template"}
    VOID = {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }
    SHOWN_ATTRIBUTES = ("title", "placeholder", "alt", "aria-label")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, bool]] = []  # each open element, and whether its text counts
        self.texts: list[str] = []

    def _counts(self) -> bool:
        return not self.open or self.open[-1][1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        lang = attributes.get("lang")
        counts = (
            self._counts()
            and tag not in self.UNSEEN
            and attributes.get("translate") != "no"
            and (lang is None or lang.lower().startswith("zh"))
        )
        if tag not in self.VOID:
            self.open.append((tag, counts))
        if counts:
            shown = [attributes.get(name) for name in self.SHOWN_ATTRIBUTES]
            if tag == "input" and attributes.get("type") in {"submit", "button", "reset"}:
                shown.append(attributes.get("value"))
            self.texts.extend(value for value in shown if value)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.open.pop()

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.open) - 1, -1, -1):
            if self.open[index][0] == tag:
                del self.open[index:]
                return

    def handle_data(self, data: str) -> None:
        if self._counts():
            self.texts.append(data)


#: What joins the parts of a composed label: a permission ("app | model | name"), a page title.
PARTS = re.compile(r" [|›·] ")


def visible_texts(html: str) -> list[str]:
    """Each text, and each part of a composed one."""
    parser = VisibleText()
    parser.feed(html)
    parser.close()
    texts = [text for text in map(normalise, parser.texts) if text]
    parts = (dict.fromkeys([text, *map(normalise, PARTS.split(text))]) for text in texts)
    return [part for each in parts for part in each if part]


# ── The data the pages show: a row of every model the admin lists, in Chinese ───────────────────


@pytest.fixture
def superuser():
    return UserFactory(username="管理員", email="admin@example.com", is_staff=True, is_superuser=True)


@pytest.fixture
def site_data(superuser) -> dict[str, Any]:
    person = UserFactory(username="王小明", email="ming@example.com", first_name="小明", last_name="王")
    event = EventFactory(
        public_id="evt-zh-hant",
        title="語意網頁工作坊",
        summary="從語意 HTML 到第一個網站工具。",
        description="一個下午的實作。",
        venue="台北市信義區",
        capacity=1,
    )
    full = EventFactory(
        public_id="evt-zh-full", title="額滿的講座", summary="座位已滿。", venue="台中", capacity=1
    )
    registration = RegistrationFactory(user=person, event=event)
    RegistrationFactory(user=superuser, event=full)
    CheckIn.objects.create(registration=registration, staff=superuser)
    EventStaff.objects.create(event=event, user=superuser, role=StaffRole.MANAGER)
    SavedEventFactory(user=person, event=event)
    question = QuestionFactory(
        event=event, identifier="diet", kind="single_choice", label_en="飲食", label_zh_hant="飲食"
    )
    QuestionOptionFactory(question=question, identifier="vegan", label_en="素食", label_zh_hant="素食")
    TicketTypeFactory(event=event, identifier="regular", name_en="一般票", name_zh_hant="一般票", price=600)
    paid = RegistrationFactory(
        user=superuser,
        event=event,
        status="pending_payment",
        amount=600,
        payment_method="bank_transfer",
        payment_status="awaiting",
        payment_reference="ABCDEF",
        payment_due_at=timezone.now() + timedelta(days=1),
    )
    BankStatementRow.objects.create(
        checksum="zh-hant",
        event=event,
        registration=paid,
        source="對帳單.csv",
        line=2,
        amount=600,
        reference="ZHHANT-ABCDEF",
        payer="王小明",
        account_last5="12345",
        state="partial",
    )
    waiting = WaitlistEntryFactory(user=person, event=full)
    Notification.objects.create(
        kind=NotificationKind.values[0],
        key="zh-hant-everywhere",
        user=person,
        email=person.email,
        event=full,
        entry=waiting,
        language="zh-hant",
    )
    ActivityFactory(action="search_events", user=person, event=event)
    personal_token, _raw = create_access_token(
        user=superuser, name="我的權杖", scopes=["events:read"], days=30
    )
    Group.objects.create(name="主辦團隊")
    application = get_application_model().objects.create(
        name="代理程式",
        user=person,
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris=LOOPBACK_REDIRECT,
    )
    expires = timezone.now() + timedelta(hours=1)
    access = get_access_token_model().objects.create(
        user=person, application=application, token=uuid.uuid4().hex, expires=expires, scope="events:read"
    )
    get_refresh_token_model().objects.create(
        user=person, application=application, token=uuid.uuid4().hex, access_token=access
    )
    get_grant_model().objects.create(
        user=person,
        application=application,
        code=uuid.uuid4().hex,
        expires=expires,
        redirect_uri=LOOPBACK_REDIRECT,
        scope="events:read",
        code_challenge="x" * 43,
        code_challenge_method="S256",
    )
    sweep_waitlists.enqueue()  # a task result
    # The sign-in limits' rows as the site makes them: a failed sign-in, one that succeeds (its log),
    # and a failure no success resets. The site keeps no failure log (AXES_ENABLE_ACCESS_FAILURE_LOG
    # is off), but the admin lists the model, so one is written here.
    browser = Client(headers={"User-Agent": "瀏覽器"})
    browser.post(reverse("login"), {"username": person.username, "password": "錯誤的密碼"})
    browser.post(reverse("login"), {"username": person.username, "password": PASSWORD})
    Client().post(reverse("login"), {"username": "無此人", "password": "錯誤的密碼"})
    AccessFailureLog.objects.create(
        username="無此人", ip_address="127.0.0.1", user_agent="瀏覽器", path_info="/"
    )
    assert AccessAttempt.objects.exists() and AccessLog.objects.exists()
    return {
        "event_id": event.public_id,
        "token": unsubscribe_token(superuser),
        "token_id": str(personal_token.pk),
        "application_id": str(application.pk),
        "client_id": application.client_id,
        "uidb64": "MQ",
        "resource_path": "mcp",
    }


# ── The pages ─────────────────────────────────────────────────────────────────────────────────


def admin_pages(request) -> Iterator[str]:
    """The admin's index and password page, each app's page, and for every registered model its
    list, add form, and one object's change, history and delete pages, where the admin offers them."""
    yield reverse("admin:index")
    yield reverse("admin:password_change")
    app_labels = set()
    for model, model_admin in admin.site._registry.items():
        info = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        app_labels.add(model._meta.app_label)
        yield reverse(f"{info}_changelist")
        if model_admin.has_add_permission(request):
            yield reverse(f"{info}_add")
        obj = model_admin.get_queryset(request).order_by("pk").first()
        assert obj is not None, f"site_data has no {model.__name__} for its change page"
        yield reverse(f"{info}_change", args=[obj.pk])
        yield reverse(f"{info}_history", args=[obj.pk])
        if model_admin.has_delete_permission(request, obj):
            yield reverse(f"{info}_delete", args=[obj.pk])
    yield from (reverse("admin:app_list", args=[label]) for label in sorted(app_labels))


def site_pages(values: dict[str, str]) -> Iterator[str]:
    """Every named route outside the admin, its parameters taken from `values` (a route with any
    other parameter is left out); the ones that answer no HTML page to a GET are dropped later."""

    def walk(patterns: list, namespace: str) -> Iterator[tuple[str, URLPattern]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = ":".join(part for part in (namespace, pattern.namespace) if part)
                yield from walk(pattern.url_patterns, inner)
            else:
                yield namespace, pattern

    for namespace, pattern in walk(get_resolver().url_patterns, ""):
        parameters = list(pattern.pattern.converters)
        if namespace == "admin" or not pattern.name or any(p not in values for p in parameters):
            continue
        name = f"{namespace}:{pattern.name}" if namespace else pattern.name
        yield reverse(name, kwargs={parameter: values[parameter] for parameter in parameters})


def consent_page() -> str:
    """The authorization page of a client that registered itself (the way agents do)."""
    body = {
        "client_name": "代理程式",
        "redirect_uris": [LOOPBACK_REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    registered = Client().post("/register", json.dumps(body), content_type="application/json")
    _verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": registered.json()["client_id"],
        "redirect_uri": LOOPBACK_REDIRECT,
        "state": "狀態",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "events:read saved:write",
        "resource": settings.MCP_RESOURCE,
    }
    return "/authorize?" + urlencode(query)


class Reader:
    """Reads pages as a person in zh-Hant and notes each English text with the pages it is on."""

    def __init__(self, labels: EnglishLabels) -> None:
        self.labels = labels
        self.pages: set[str] = set()
        self.english: dict[str, set[str]] = {}

    def read(self, response, url: str) -> None:
        if not response.get("Content-Type", "").startswith("text/html"):
            return
        self.pages.add(url)
        for text in visible_texts(response.content.decode()):
            if text in self.labels and text not in ALLOWED_ENGLISH:
                self.english.setdefault(text, set()).add(url)

    def get(self, client: Client, url: str, *, any_status: bool = False) -> None:
        response = client.get(url, headers=ZH)
        if any_status or response.status_code == 200:
            self.read(response, url)

    def post(self, client: Client, url: str, data: dict[str, str]) -> None:
        self.read(client.post(url, data, headers=ZH), f"POST {url}")

    def report(self) -> list[str]:
        return [
            f"{text!r} on {len(urls)} page(s), e.g. {min(urls)}"
            for text, urls in sorted(self.english.items())
        ]


def test_every_admin_and_site_page_shows_no_english_label(site_data, superuser):
    request = RequestFactory().get("/admin/")
    request.user = superuser
    reader = Reader(EnglishLabels(third_party_msgids() | our_msgids() | code_names(request)))
    signed_in, anonymous = Client(), Client()
    signed_in.force_login(superuser)

    admin_urls = list(admin_pages(request))
    for url in admin_urls:
        reader.get(signed_in, url)
    reader.get(signed_in, reverse("admin:events_event_changelist") + "?" + urlencode({"q": "不存在"}))
    reader.post(signed_in, reverse("admin:events_event_add"), {})  # the errors of an empty form
    reader.get(anonymous, reverse("admin:login"))

    for url in [*site_pages(site_data), consent_page()]:
        reader.get(signed_in, url)
        reader.get(anonymous, url)
    reader.get(anonymous, "/events/evt-none/", any_status=True)  # the 404 page
    reader.post(anonymous, reverse("login"), {"username": "無此人", "password": "錯誤的密碼"})
    reader.post(anonymous, reverse("signup"), {})

    assert len(admin_urls) >= 3 * len(admin.site._registry)  # the admin was read, not skipped
    assert reader.pages >= {"/events/", f"/events/{site_data['event_id']}/", "/me/", "/accounts/login/"}
    assert not reader.english, "English on zh-Hant pages:\n" + "\n".join(reader.report())


def test_the_admins_scripts_have_every_string_in_chinese(superuser):
    """The admin's scripts (calendars, clocks, filters) take their words from its JavaScript
    catalogue, which the page cannot show until a browser runs it: each of Django's msgids has a
    translation in the catalogue the admin serves."""
    client = Client()
    client.force_login(superuser)
    script = client.get(reverse("admin:jsi18n"), headers=ZH).content.decode()
    catalog = json.loads(re.search(r"const newcatalog = (\{.*?\});", script, re.S).group(1))
    english = DJANGO_DIR / "contrib" / "admin" / "locale" / "en" / "LC_MESSAGES" / "djangojs.po"
    entries = [entry for entry in polib.pofile(str(english)) if not entry.obsolete]
    missing = [
        entry.msgid
        for entry in entries
        if not catalog.get(f"{entry.msgctxt}\x04{entry.msgid}" if entry.msgctxt else entry.msgid)
    ]
    assert missing == []


def test_our_catalogues_leave_nothing_untranslated():
    untranslated = [
        f"{po_file.relative_to(settings.BASE_DIR)}: {entry.msgid!r}"
        for po_file in OUR_CATALOGUES
        for entry in polib.pofile(str(po_file))
        if not entry.obsolete and (not entry.translated() or "fuzzy" in entry.flags)
    ]
    assert len(OUR_CATALOGUES) >= 3  # ours, and the installed apps' django and djangojs
    assert untranslated == []


def test_english_labels_find_a_msgid_with_its_placeholders_filled_in():
    labels = EnglishLabels(["Filter by %(field_name)s", "Task Results", "%s", "%(name)s: %(value)s"])
    assert "Filter by 開始時間" in labels and "依開始時間篩選" not in labels
    assert "task results" in labels and "背景工作" not in labels
    assert "名稱: 值" not in labels and "x" not in labels  # no English word of their own


def test_visible_text_leaves_out_scripts_and_what_is_not_chinese_by_intent():
    html = (
        '<title>活動</title><script>var a = "Search";</script><p title="Search">找<b>Events</b></p>'
        '<button lang="en">English</button><span translate="no">AgentReady <span>Events</span></span>'
        '<input type="submit" value="Save"><img alt="Search"><br>後面'
    )
    assert visible_texts(html) == ["活動", "Search", "找", "Events", "Save", "Search", "後面"]
    assert visible_texts("<option>帳號 | session | 可新增session</option>") == [
        "帳號 | session | 可新增session",
        "帳號",
        "session",
        "可新增session",
    ]


def test_the_admins_save_button_keeps_djangos_word_not_the_events_bookmark(superuser):
    """Our catalogue and Django's share a msgid only with the same meaning: the event page's "Save"
    (收藏, bookmark) has its own context, so the admin's forms still say 儲存 (store)."""
    client = Client()
    client.force_login(superuser)
    html = client.get(reverse("admin:events_event_add"), headers=ZH).content.decode()
    assert 'value="儲存"' in html and 'value="收藏"' not in html


def test_cleaning_up_sign_in_attempts_says_how_many_in_chinese(superuser):
    """axes's own action words its message in an f-string no catalogue reaches (and answered 500
    from the admin, reading a sign-in's attempt time); ours counts in words the catalogue has.
    axes itself removes expired attempts as each request comes in, so by the action none is left."""
    current = AccessAttempt.objects.create(username="now", ip_address="192.0.2.2", failures_since_start=1)
    client = Client()
    client.force_login(superuser)
    answer = client.post(
        reverse("admin:axes_accessattempt_changelist"),
        {"action": "cleanup_expired_attempts", "_selected_action": [current.pk]},
        headers=ZH,
        follow=True,
    )
    assert answer.status_code == 200
    assert [str(message) for message in answer.context["messages"]] == ["已清除 0 筆過期的登入嘗試。"]
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == ["now"]
