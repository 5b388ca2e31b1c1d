"""The site's catalogues never miss a string: `makemessages`, run as the catalogues' header says on a
copy of the site's code, would neither add nor drop a msgid, and every zh-Hant entry is translated and
not fuzzy (tests/pages/test_zh_hant_everywhere.py checks that for every catalogue of ours). So a string
in a template or in Python (the site's code: not the tests, not the installed apps, whose zh-Hant is in
locale/installed_apps/) that has no zh-Hant translation fails here, before anyone reads it in English."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings

pytestmark = pytest.mark.unit

BASE = Path(settings.BASE_DIR)
LANGUAGES = ("zh_Hant", "en")
#: The command of the catalogues' header, which is how they are updated.
MAKEMESSAGES = [
    "makemessages",
    *(f"-l{language}" for language in LANGUAGES),
    "--ignore=.venv",
    "--ignore=.tools",
    "--ignore=node_modules",
    "--ignore=tests",
    "--add-location=file",
    "--no-obsolete",
]
#: What makemessages reads (Django's extensions for the `django` domain) and what it updates.
SOURCES = (".py", ".html", ".txt")
SKIPPED = {"node_modules", "tests", "__pycache__"}


def catalogue(language: str, base: Path = BASE) -> Path:
    return base / "locale" / language / "LC_MESSAGES" / "django.po"


def msgids(po_file: Path) -> set[tuple[str | None, str, str]]:
    return {
        (entry.msgctxt, entry.msgid, entry.msgid_plural)
        for entry in polib.pofile(str(po_file))
        if not entry.obsolete
    }


def copy_site(target: Path) -> None:
    """The site's source files and its catalogues, without the environment, tools and tests."""
    for folder, folders, files in os.walk(BASE):
        folders[:] = [name for name in folders if not name.startswith(".") and name not in SKIPPED]
        for name in files:
            if name.endswith((*SOURCES, ".po")):
                relative = Path(folder, name).relative_to(BASE)
                (target / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(BASE / relative, target / relative)


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    copy = tmp_path_factory.mktemp("site")
    copy_site(copy)
    subprocess.run(
        [sys.executable, "manage.py", *MAKEMESSAGES],
        cwd=copy,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return copy


@pytest.mark.slow  # starts a process (manage.py makemessages, xgettext)
@pytest.mark.parametrize("language", LANGUAGES)
def test_makemessages_would_neither_add_nor_drop_a_string(regenerated, language):
    committed, current = msgids(catalogue(language)), msgids(catalogue(language, regenerated))
    command = f"manage.py {' '.join(MAKEMESSAGES)}"
    assert sorted(current - committed, key=str) == [], f"new strings: run `{command}` and translate them"
    assert sorted(committed - current, key=str) == [], f"strings no code uses: run `{command}`"


def test_the_catalogues_header_names_this_command():
    header = catalogue("zh_Hant").read_text(encoding="utf-8").split("msgid", 1)[0]
    flat = " ".join(line.lstrip("# ") for line in header.splitlines())
    assert " ".join(MAKEMESSAGES) in flat.replace("-l zh_Hant -l en", "-lzh_Hant -len")
