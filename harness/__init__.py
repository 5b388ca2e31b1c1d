"""The one way tests, evals and bench drive a browser agent.

`tests/browser`, the eval runner (`evals/`) and the benchmarks (`bench/`) all start Chromium with WebMCP,
point it at a live site, check which code answered (`/health`) and call the page's tools as an agent
does. Each of those is written once, here, so the three cannot drift apart:

- `harness.chromium`: Debian's Chromium, the one set of launch flags (`--enable-features=WebMCP`,
  loopback-only host rules) and launching it through Playwright;
- `harness.server`: a site in a child process on a free 127.0.0.1 port, ready when `/health` answers,
  and what `/health` says (revision, tool catalogue fingerprint);
- `harness.tools`: the page's tools as the browser lists them, waiting for them to match, starting a
  call without awaiting it, finishing it, and finding the button a call waits on for the person's press.

Test configuration, not part of the site: nothing of the running app imports this package, and this
package imports nothing of the project (no Django, no `tests`), so evals and bench may use it freely.
The browser part is django-webmcp's own test helpers (`django_webmcp.testing.browser`, which needs no
Django either), the ones the package gives its users; this package adds the site's error type to them.
Playwright is imported only when a browser is launched.
"""

from __future__ import annotations


class HarnessError(Exception):
    """The browser, the site or a tool call did not do what the harness needs; the message says which."""
