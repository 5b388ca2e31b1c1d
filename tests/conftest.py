"""Shared fixtures; the rule that every test file declares its kind; the two parts of `make test`."""

import atexit
import gc

import pytest
from django.test import Client, override_settings
from xdist.scheduler import LoadGroupScheduling

from tests.factories import EventFactory, UserFactory
from tests.kinds import kind_problem

#: Fixtures that reach the test database (pytest-django's, and the browser package's live server).
DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_setup"}
#: Where the tests marked serial are. `make test`'s serial run collects these files alone (not the
#: whole suite to keep five tests), and the parallel run stops at a serial test elsewhere, which
#: neither run would otherwise run.
SERIAL_FILES = {
    "tests/browser/test_database_guard.py",
    "tests/browser/test_lighthouse.py",
    "tests/deploy/test_faults.py",
}

#: Test files whose tests share one costly module fixture (the eval runner's seeded server, about 10 s to
#: start): an xdist worker takes each of these whole, so it starts once rather than once per worker.
WHOLE_FILES = {"tests/evals/test_runs.py"}


def pytest_addoption(parser):
    parser.addoption(
        "--suite-part",
        choices=["serial", "parallel"],
        help="make test's two runs: the tests marked serial (alone), or all the others (on xdist workers)",
    )


def pytest_ignore_collect(collection_path, config):
    """The serial run reads only `SERIAL_FILES` of the test files."""
    if (
        config.getoption("suite_part") == "serial"
        and collection_path.is_file()
        and collection_path.name.startswith("test_")
        and collection_path.suffix == ".py"
    ):
        return collection_path.relative_to(config.rootpath).as_posix() not in SERIAL_FILES
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """`--suite-part` keeps one part of the suite. Spread over xdist workers, the slow tests that use no
    test database then go first (after pytest-django's ordering of the others): each is a minute or
    two of one worker, and started last they would leave the other worker idle at the end."""
    part = config.getoption("suite_part")
    if part:
        serial = part == "serial"
        dropped = [item for item in items if bool(item.get_closest_marker("serial")) != serial]
        astray = sorted(
            {item.nodeid for item in items if item.get_closest_marker("serial")}
            - {
                item.nodeid
                for item in items
                if item.path.relative_to(config.rootpath).as_posix() in SERIAL_FILES
            }
        )
        if astray:
            pytest.exit(f"tests marked serial outside SERIAL_FILES (tests/conftest.py): {astray}", 4)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if bool(item.get_closest_marker("serial")) == serial]
    _refuse_own_database_on_the_test_database(items)
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: not (item.get_closest_marker("slow") and not _uses_test_database(item)))


def _refuse_own_database_on_the_test_database(items) -> None:
    """A test marked `own_database` runs on CI's first database only (.ci/run): one that uses the test
    database would then miss the second, so the collection stops."""
    astray = [
        item.nodeid for item in items if item.get_closest_marker("own_database") and _uses_test_database(item)
    ]
    if astray:
        pytest.exit(f"tests marked own_database use the test database: {astray}", 4)


class WholeFilesScheduling(LoadGroupScheduling):
    """`--dist loadgroup` (the Makefile's), with each of `WHOLE_FILES` as one unit of work. xdist's own
    way, an `xdist_group` mark, is lost under pytest 9 (it rides on a node id field pytest no longer
    reads); its scheduler still groups by what `_split_scope` returns, so that is what is changed."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return path if path in WHOLE_FILES else super()._split_scope(nodeid)


def pytest_xdist_make_scheduler(config, log):
    return WholeFilesScheduling(config, log) if config.getvalue("dist") == "loadgroup" else None


def _uses_test_database(item) -> bool:
    return bool(item.get_closest_marker("django_db")) or bool(DATABASE_FIXTURES & set(item.fixturenames))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector):
    """A test file without its kind fails collection, and so the run (serially, before any test runs)."""
    report = yield
    if isinstance(collector, pytest.Module) and report.passed:
        problem = kind_problem(collector.obj)
        if problem:
            report.outcome = "failed"
            report.longrepr = problem
    return report


def pytest_collection_finish(session):
    """What is there once the tests are collected (the project and its packages imported, Django set
    up, the test items) lives as long as the process: kept out of the garbage collector's full passes,
    which would otherwise walk it again each time, and once more as pytest ends (its search for
    unraisable exceptions), seconds of each process's time over the suite."""
    gc.freeze()


def pytest_unconfigure(config):
    """By the time the interpreter shuts down, pytest has collected the garbage once more (to report
    exceptions raised in finalizers); the interpreter's own full pass after it only delays the exit
    the xdist controller waits for, about a second per process."""
    atexit.register(gc.freeze)


def pytest_configure(config):
    """The SQLite test database is copied from the one made for the same schema (tests/dbtemplate.py)."""
    from tests.dbtemplate import install

    install()


@pytest.fixture(scope="session", autouse=True)
def fast_password_hashing():
    """Accounts are made by the hundred (factories, seeds, package fixtures), and the production
    hasher spends 0.3 s on each by design; what the tests test is who may do what, not the hash.
    Session-wide, so package fixtures get it too. Servers started as processes (tests/tasks.py)
    keep the production hasher, and no test signs in to one with a password made here."""
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def activity_written_at_once(settings):
    """Each call's Activity row is written as the call ends, so a test can count it right away. The
    batched writer the site runs with is tested on its own (tests/events/test_activity_buffer.py)."""
    settings.ACTIVITY_FLUSH_SECONDS = 0


@pytest.fixture(autouse=True)
def compiled_statements_checked(settings):
    """Each search through a compiled statement (core/statements.py) is compared with the ORM's own
    compile of the same call: any difference fails the test that made the call."""
    settings.STATEMENT_CACHE_VERIFY = True


@pytest.fixture(autouse=True)
def catalogue_read_each_time(settings):
    """The list page reads the catalogue's revision on every request, so a test sees its own change on
    the next page at once. The revision kept for a second for visitors without an account, as the site
    runs, is tested on its own (tests/pages/test_kept_catalogue_revision.py)."""
    settings.CATALOGUE_REVISION_SECONDS = 0


@pytest.fixture
def user(db):
    return UserFactory(username="alice")


@pytest.fixture
def other_user(db):
    return UserFactory(username="bob")


@pytest.fixture
def signed_in_client(user) -> Client:
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


@pytest.fixture
def event(db):
    return EventFactory(
        public_id="evt-webmcp-intro", title="WebMCP 入門工作坊", summary="從語意 HTML 到第一個網站 Tool。"
    )


#: The tools an agent has over /mcp, by name (the registry's order), written out once for the tests
#: that hold a list of tools to it: the SDK's client, the MCP Inspector, the evals' `--via mcp`.
MCP_TOOL_NAMES = (
    "cancel_registration",
    "check_in_attendee",
    "confirm_payment",
    "find_attendee",
    "get_event_details",
    "join_waitlist",
    "leave_waitlist",
    "register_event",
    "save_event",
    "search_events",
)


@pytest.fixture
def mcp_tool_names() -> list[str]:
    """`MCP_TOOL_NAMES`, a list of its own for the test."""
    return list(MCP_TOOL_NAMES)
