"""Catalogue drift: the tool set an agent sees, held to a snapshot file committed with the code.

A description, a serializer field or an exposure that changes changes what agents read and what
evaluations measured, so it should change on purpose: the snapshot makes that change a reviewed diff.
`WEBMCP_UPDATE_SNAPSHOTS=1 pytest …` writes the snapshot anew instead of comparing.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Any

from django_webmcp.registry import Registry

#: Set to 1 in the environment to rewrite snapshots rather than compare against them.
UPDATE_VARIABLE = "WEBMCP_UPDATE_SNAPSHOTS"


class CatalogueDrift(AssertionError):
    """The registry no longer matches its snapshot; the message is a unified diff."""


def catalogue_snapshot(registry: Registry) -> dict[str, Any]:
    """What is compared: the fingerprint and the description it hashes (language-independent)."""
    return {"fingerprint": registry.fingerprint(), **registry.describe()}


def _text(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def assert_catalogue_unchanged(registry: Registry, snapshot: str | os.PathLike[str]) -> None:
    """Raise `CatalogueDrift` with a diff when `registry` differs from the JSON file `snapshot`.

    With `WEBMCP_UPDATE_SNAPSHOTS=1`, or when the file does not exist yet, the file is written instead
    (a missing snapshot still fails, so a forgotten file is not a silent pass).
    """
    path = Path(snapshot)
    current = _text(catalogue_snapshot(registry))
    if os.environ.get(UPDATE_VARIABLE) == "1" or not path.exists():
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(current, encoding="utf-8")
        if not existed:
            raise CatalogueDrift(f"{path} did not exist; it was written now: review and commit it.")
        return
    recorded = path.read_text(encoding="utf-8")
    if recorded != current:
        diff = "".join(
            difflib.unified_diff(
                recorded.splitlines(keepends=True),
                current.splitlines(keepends=True),
                fromfile=f"{path} (recorded)",
                tofile="registry (now)",
            )
        )
        raise CatalogueDrift(
            f"The tool catalogue drifted from {path}; if the change is meant, run with "
            f"{UPDATE_VARIABLE}=1 and commit the file.\n{diff}"
        )
