"""`make test`'s workers take each file of `WHOLE_FILES` whole (tests/conftest.py), so the costly fixture
its tests share starts once; every other test is a unit of its own, as under plain `--dist loadgroup`."""

from pathlib import Path

import pytest

from tests.conftest import WHOLE_FILES, WholeFilesScheduling, pytest_xdist_make_scheduler

pytestmark = pytest.mark.unit


def split(nodeid: str) -> str:
    # The unit of work a node id belongs to; the scheduler's own state is not needed to say it.
    return WholeFilesScheduling._split_scope(object.__new__(WholeFilesScheduling), nodeid)


def test_the_tests_of_a_whole_file_are_one_unit_and_any_other_test_its_own():
    assert split("tests/evals/test_runs.py::test_smoke_runs_every_case_of_the_bank_and_each_passes") == (
        "tests/evals/test_runs.py"
    )
    assert split("tests/evals/test_runs.py::test_model_mode_over_mcp_with_the_good_stub_policy_passes") == (
        "tests/evals/test_runs.py"
    )
    other = "tests/evals/test_matcher.py::test_rows_say_why_a_call_failed"
    assert split(other) == other
    parametrized = "tests/browser/test_security.py::test_pages_load[/events/]"
    assert split(parametrized) == parametrized


def test_every_whole_file_exists():
    root = Path(__file__).resolve().parent.parent
    assert all((root / path).is_file() for path in WHOLE_FILES)


def test_other_distributions_keep_xdists_own_scheduler(pytestconfig, monkeypatch):
    monkeypatch.setattr(pytestconfig.option, "dist", "load")
    assert pytest_xdist_make_scheduler(pytestconfig, None) is None
