"""How to start the Chromium that tests, evals and benchmarks drive: Debian's build, WebMCP enabled.

The flags are the observed ones (../shared/reference/webmcp-in-chromium.md): `--enable-features=WebMCP`
must appear literally for Playwright's `page.webmcp`, and the networking flags keep the browser on
loopback. Nothing here imports Playwright, so importing it costs nothing.
"""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS: tuple[str, ...] = (
    "--enable-features=WebMCP",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
)
