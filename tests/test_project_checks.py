"""Django's own checks of the project, in the suite (so `make test-fast` runs them too): the system
checks find nothing at WARNING or above, and the models need no migration that is not written."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_the_system_checks_find_nothing_at_warning_or_above():
    out = io.StringIO()
    call_command("check", fail_level="WARNING", stdout=out, stderr=out)  # raises SystemCheckError
    assert "no issues" in out.getvalue()


def test_every_model_change_has_its_migration():
    out = io.StringIO()
    try:
        call_command("makemigrations", check=True, dry_run=True, stdout=out, stderr=out)
    except SystemExit as exit_:  # --check exits 1 when a migration is missing
        pytest.fail(f"a migration is missing (exit {exit_.code}):\n{out.getvalue()}")
    assert "No changes detected" in out.getvalue()
