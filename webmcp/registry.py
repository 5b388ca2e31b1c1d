"""The tool registry (minimal placeholder until the full registry lands): the catalogue fingerprint."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def catalogue() -> dict[str, Any]:
    return {"tools": []}


def catalogue_fingerprint() -> str:
    canonical = json.dumps(catalogue(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
