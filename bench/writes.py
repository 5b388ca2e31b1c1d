"""Our site for the rows that register people: a database restored from its seeded template before each
write run, so every run starts from the same rows and statistics (the peer's gets the same treatment).

The seeded template is a copy of the bench's main database taken right after it was filled and
`VACUUM ANALYZE`d (bench/run.py), with the peer event and its people (`bench.tasks populate
--peer-file`): each person has a session and a personal access token, and registers once per run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from bench.infra import DB_PREFIX, Server
from bench.session import Session

SEED = f"{DB_PREFIX}_writes_seed"
LIVE = f"{DB_PREFIX}_writes"


class WritesSite:
    """Our gunicorn (the bench's flags) on `LIVE`, restored from `SEED` by `reset()`."""

    def __init__(self, session: Session, setup_file: Path) -> None:
        self.session = session
        self.url = session.dbs.url(LIVE)
        self.server: Server = session.server("writes", self.url)
        self.setup = json.loads(setup_file.read_text())

    def reset(self) -> None:
        """The server stopped, the database restored from the template, the server started again."""
        self.server.stop()
        self.session.dbs.create(LIVE, template=SEED)
        self.server.start()

    def people(self) -> Iterator[tuple[str, str]]:
        """(session key, token) of each person, once each: a person registers once per event."""
        return (tuple(person) for person in self.setup["people"])  # type: ignore[misc]

    def confirmed(self) -> int:
        """Confirmed registrations for the peer event, as the database holds them now."""
        stored = self.session.task(self.url, "contention-check", "--event", self.setup["event"], timeout=120)
        return int(stored["events"][0]["confirmed"])
