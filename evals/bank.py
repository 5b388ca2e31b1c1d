"""The scenario bank: case files in the webmcp-evals format plus our sidecar of per-case facts.

`evals/cases/*.json` (except the sidecar) are JSON arrays of `{name, messages, expectedCall}` exactly as
Google's webmcp-evals CLI reads them, so the CLI can run them unchanged. A conversation that goes on over
several turns is written as upstream writes one: the earlier turns are in `messages` — the person's
messages, the agent's calls (`{role: "model", type: "functioncall", name, arguments}`) each followed by
the tool's answer (`{role: "user", type: "functionresponse", name, response: {result}}`), the agent's
replies — and `expectedCall` says what a good agent does after the person's last message. Our runner
replays those earlier calls on the case's page first, so the last turn starts on the page the previous
call left (see `Case.history`). Everything the CLI has no field for lives in `evals/cases/routes.json`,
keyed by case name:

    {"cases": {"<case name>": {
        "route": "/events/",               page the conversation starts on (required)
        "locale": "zh-TW",                  browser language (default en-US)
        "tags": ["SEL", "zh-Hant"],         category (SEL ARG ORD NO RECOVERY WRITE AUTH NAV) and language
        "seed": "SEL-01",                   question-bank id from the article series, when there is one
        "setup": {"resetSeats": "evt-…",    first, the event's seeded seats back: the runner's accounts
                                            leave its waiting list and cancel there, seeded registrants
                                            register again (evals/seats.py, through events.services)
                  "signedIn": true,         a fresh account, signed up through /accounts/signup/
                  "before": [call, ...],    tool calls made on the page before the conversation
                  "freeSeat": "evt-…",      after `before`: a seeded registrant of the event cancels, the
                                            seat is offered to the case's account (which must be the one
                                            waiting), and the page is reloaded; needs signedIn, resetSeats
                                            on the same event and a join_waitlist call in `before`
                  "door": "evt-…",          the case's account joins the event's door staff (so its
                                            check-in page offers the door's tools), its seeded seats
                                            come back and nobody is checked in there; needs signedIn
                  "blockApi": {"url": glob, "times": n}},   requests aborted (times absent: all)
        "exactArguments": true,             matched calls may carry no argument beyond the expected ones
        "allowRelaxAfterZero": true,        the person allows a looser search after zero results (in the
                                            same or a later message); or a list of the conditions they
                                            allowed to drop or change, e.g. ["level"] ("any level is fine")
        "smokeArguments": [obj | null, ...] concrete arguments for smoke mode, per expected call in
                                            written order, where the expected ones use operators
        "answerOnPage": true,               the answer is in the page's visible text, which is what the
                                            case checks: not applicable over MCP, where a client has
                                            no page (and the model's prompt none of its text)
        "answerMustNot": ["regex", ...]     the agent's final answer (model mode) may match none of
                                            these, e.g. a claim that a person who still has to pay is
                                            registered
    }}}

The loader refuses anything the CLI or our runner would misread, so a broken bank fails fast.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .matcher import (
    OPERATORS,
    compile_pattern,
    flatten_calls,
    is_call,
    is_ordered,
    is_unordered,
    operators_in,
)

CASES_DIR = Path(__file__).resolve().parent / "cases"
SIDECAR_NAME = "routes.json"
CATEGORIES = ("SEL", "ARG", "ORD", "NO", "RECOVERY", "WRITE", "AUTH", "NAV")
LANGUAGES = ("en", "zh-Hant")
CASE_KEYS = {"name", "messages", "expectedCall"}
CALL_KEYS = {"functionName", "arguments", "result", "optional"}
MESSAGE_ROLES = {"user", "model", "assistant", "system"}
MESSAGE_TYPES = {"message", "functioncall", "functionresponse"}
# The conditions of `search_events` a person can allow an agent to drop after zero results.
SEARCH_CONDITIONS = ("query", "location", "price", "level")
META_KEYS = {
    "route",
    "locale",
    "tags",
    "seed",
    "setup",
    "exactArguments",
    "allowRelaxAfterZero",
    "smokeArguments",
    "answerOnPage",
    "answerMustNot",
    "note",
}
SETUP_KEYS = {"signedIn", "before", "blockApi", "resetSeats", "freeSeat", "door"}


class BankError(ValueError):
    """The bank cannot be used as written."""


@dataclass(frozen=True)
class CaseMeta:
    route: str
    locale: str = "en-US"
    tags: tuple[str, ...] = ()
    seed: str | None = None
    setup: dict = field(default_factory=dict)
    exactArguments: bool = False
    allowRelaxAfterZero: bool | tuple[str, ...] = False
    smokeArguments: tuple | None = None
    answerOnPage: bool = False
    answerMustNot: tuple[str, ...] = ()
    note: str | None = None

    def as_dict(self) -> dict:
        data = {
            "route": self.route,
            "locale": self.locale,
            "tags": list(self.tags),
            "seed": self.seed,
            "setup": self.setup,
            "exactArguments": self.exactArguments,
            "allowRelaxAfterZero": list(self.allowRelaxAfterZero)
            if isinstance(self.allowRelaxAfterZero, tuple)
            else self.allowRelaxAfterZero,
            "smokeArguments": list(self.smokeArguments) if self.smokeArguments is not None else None,
            "answerOnPage": self.answerOnPage,
            "answerMustNot": list(self.answerMustNot),
            "note": self.note,
        }
        return {key: value for key, value in data.items() if value not in (None, False, {}, [])}

    @classmethod
    def from_dict(cls, data: dict) -> CaseMeta:
        unknown = set(data) - META_KEYS
        if unknown:
            raise BankError(f"unknown sidecar keys {sorted(unknown)}")
        smoke = data.get("smokeArguments")
        relax = data.get("allowRelaxAfterZero", False)
        if isinstance(relax, list):
            relax = tuple(relax)
        elif not isinstance(relax, bool):
            raise BankError("allowRelaxAfterZero is true, false or a list of conditions")
        return cls(
            route=data["route"],
            locale=data.get("locale", "en-US"),
            tags=tuple(data.get("tags", ())),
            seed=data.get("seed"),
            setup=dict(data.get("setup") or {}),
            exactArguments=bool(data.get("exactArguments", False)),
            allowRelaxAfterZero=relax,
            smokeArguments=tuple(smoke) if smoke is not None else None,
            answerOnPage=bool(data.get("answerOnPage", False)),
            answerMustNot=tuple(data.get("answerMustNot") or ()),
            note=data.get("note"),
        )

    @property
    def category(self) -> str:
        return next((tag for tag in self.tags if tag in CATEGORIES), "")


@dataclass(frozen=True)
class Case:
    name: str
    messages: list
    expectedCall: Any
    meta: CaseMeta
    source: str = ""

    def upstream(self) -> dict:
        """The case exactly as the webmcp-evals CLI reads it."""
        return {"name": self.name, "messages": self.messages, "expectedCall": self.expectedCall}

    def as_dict(self) -> dict:
        return {**self.upstream(), "meta": self.meta.as_dict(), "source": self.source}

    @classmethod
    def from_dict(cls, data: dict) -> Case:
        return cls(
            name=data["name"],
            messages=data["messages"],
            expectedCall=data["expectedCall"],
            meta=CaseMeta.from_dict(data.get("meta") or {"route": "/"}),
            source=data.get("source", ""),
        )

    def user_messages(self) -> list[str]:
        """What the person said, message by message (turn n answers the n-th)."""
        return [message["content"] for message in self.messages if _is_user_text(message)]

    def history(self) -> list[dict]:
        """The calls of the earlier turns, in order, as the runner replays them before the last turn:
        `{functionName, arguments, response, turn}` — `response` is what the tool answered then (the
        `result` of the functionresponse, as upstream reads it), `turn` the person's message it followed."""
        calls: list[dict] = []
        turn = 0
        for position, message in enumerate(self.messages):
            kind = message.get("type", "message")
            if _is_user_text(message):
                turn += 1
            elif kind == "functioncall":
                answer = self.messages[position + 1]["response"]
                calls.append(
                    {
                        "functionName": message["name"],
                        "arguments": message.get("arguments") or {},
                        "response": answer.get("result", answer),
                        "turn": turn,
                    }
                )
        return calls

    def smoke_calls(self) -> list[dict]:
        """The expected calls in written order, with concrete arguments (what smoke mode executes)."""
        calls = []
        overrides = self.meta.smokeArguments or ()
        for position, node in enumerate(flatten_calls(self.expectedCall)):
            arguments = overrides[position] if position < len(overrides) else None
            if arguments is None:
                arguments = node.get("arguments") or {}
            calls.append({"functionName": node["functionName"], "arguments": arguments})
        return calls


# ---- loading ------------------------------------------------------------------------------------


def case_files(location: Path | None = None) -> list[Path]:
    location = location or CASES_DIR
    if location.is_file():
        return [location]
    return sorted(path for path in location.glob("*.json") if path.name != SIDECAR_NAME)


def load_sidecar(directory: Path) -> dict[str, dict]:
    path = directory / SIDECAR_NAME
    if not path.exists():
        raise BankError(f"{path}: the sidecar with each case's route is missing")
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("cases"), dict):
        raise BankError(f'{path}: expected {{"cases": {{name: {{route, ...}}}}}}')
    return data["cases"]


def load_bank(location: Path | str | None = None) -> list[Case]:
    """Every case of the bank (a directory, or one case file next to its sidecar), validated."""
    location = Path(location) if location else CASES_DIR
    directory = location if location.is_dir() else location.parent
    sidecar = load_sidecar(directory)
    cases: list[Case] = []
    seen: set[str] = set()
    files = case_files(location)
    if not files:
        raise BankError(f"{location}: no case files")
    for path in files:
        entries = _read_json(path)
        if not isinstance(entries, list):
            raise BankError(f"{path}: a case file is a JSON array of cases")
        for position, entry in enumerate(entries):
            where = f"{path.name}[{position}]"
            _check_case(entry, where)
            name = entry["name"]
            if name in seen:
                raise BankError(f"{where}: duplicate case name {name!r}")
            seen.add(name)
            if name not in sidecar:
                raise BankError(f"{where}: {name!r} has no entry in {SIDECAR_NAME}")
            try:
                meta = CaseMeta.from_dict(sidecar[name])
            except (BankError, KeyError, TypeError) as error:
                raise BankError(f"{SIDECAR_NAME}[{name!r}]: {error}") from error
            case = Case(name, entry["messages"], entry["expectedCall"], meta, path.name)
            _check_meta(case, f"{SIDECAR_NAME}[{name!r}]")
            cases.append(case)
    if location.is_dir():
        orphans = sorted(set(sidecar) - seen)
        if orphans:
            raise BankError(f"{SIDECAR_NAME}: entries for cases that do not exist: {orphans}")
    return cases


def bank_digest(location: Path | str | None = None) -> str:
    """sha256 over the case files and the sidecar, so a report names the exact bank it ran."""
    location = Path(location) if location else CASES_DIR
    directory = location if location.is_dir() else location.parent
    digest = hashlib.sha256()
    for path in [*case_files(location), directory / SIDECAR_NAME]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return "sha256:" + digest.hexdigest()


def select(cases: list[Case], only: list[str] | None = None) -> list[Case]:
    """Cases whose name contains, or whose tags include, any of `only` (case-insensitive)."""
    if not only:
        return cases
    wanted = [item.lower() for item in only]
    return [
        case
        for case in cases
        if any(
            item in case.name.lower() or item in (tag.lower() for tag in case.meta.tags) for item in wanted
        )
    ]


# ---- checks -------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise BankError(f"{path}: not valid JSON ({error})") from error


def _check_case(entry: Any, where: str) -> None:
    if not isinstance(entry, dict):
        raise BankError(f"{where}: a case is an object")
    if set(entry) != CASE_KEYS:
        raise BankError(
            f"{where}: a case has exactly the keys {sorted(CASE_KEYS)} "
            f"(our own data goes in {SIDECAR_NAME}); got {sorted(entry)}"
        )
    if not isinstance(entry["name"], str) or not entry["name"].strip():
        raise BankError(f"{where}: name must be a non-empty string")
    _check_messages(entry["messages"], where)
    expected = entry["expectedCall"]
    if expected is None:
        return
    if not isinstance(expected, list) or not expected:
        raise BankError(
            f"{where}: expectedCall is null (no tool may be called) or a non-empty list of nodes; "
            "write null rather than []"
        )
    for node in expected:
        _check_node(node, where)


def _is_user_text(message: dict) -> bool:
    return message.get("role") == "user" and message.get("type", "message") == "message"


def _check_messages(messages: Any, where: str) -> None:
    """upstream's three message shapes; every earlier call answered right after it; the person last."""
    if not isinstance(messages, list) or not messages:
        raise BankError(f"{where}: messages must be a non-empty list")
    for position, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in MESSAGE_ROLES:
            raise BankError(f"{where}: each message needs a role in {sorted(MESSAGE_ROLES)}")
        kind = message.get("type", "message")
        if kind not in MESSAGE_TYPES:
            raise BankError(f"{where}: message type {kind!r} is not one of {sorted(MESSAGE_TYPES)}")
        if kind == "message":
            if not isinstance(message.get("content"), str):
                raise BankError(f"{where}: a chat message needs string content")
            continue
        role, part = ("model", "arguments") if kind == "functioncall" else ("user", "response")
        if message["role"] != role or not isinstance(message.get("name"), str) or not message["name"]:
            raise BankError(f"{where}: a {kind} is {{role: {role!r}, type, name, {part}}}")
        if not isinstance(message.get(part), dict):
            raise BankError(f"{where}: the {part} of a {kind} must be an object")
        if operators_in(message[part]):
            raise BankError(f"{where}: a {kind} is shown to the model as written: no operators in its {part}")
        previous = messages[position - 1] if position else {}
        following = messages[position + 1] if position + 1 < len(messages) else {}
        if kind == "functioncall" and (
            following.get("type") != "functionresponse" or following.get("name") != message["name"]
        ):
            raise BankError(f"{where}: the functioncall {message['name']} needs its functionresponse next")
        if kind == "functionresponse" and previous.get("type") != "functioncall":
            raise BankError(f"{where}: a functionresponse answers the functioncall just before it")
    if not _is_user_text(messages[-1]):
        raise BankError(f"{where}: the last message is the person's (expectedCall answers it)")


def _check_node(node: Any, where: str) -> None:
    if is_ordered(node) or is_unordered(node):
        key = "ordered" if is_ordered(node) else "unordered"
        if set(node) != {key} or not isinstance(node[key], list) or not node[key]:
            raise BankError(f"{where}: a {key} group is {{{key}: [nodes…]}} with at least one node")
        for inner in node[key]:
            _check_node(inner, where)
        return
    if not is_call(node):
        raise BankError(f"{where}: a node is a call {{functionName, …}} or an ordered/unordered group")
    unknown = set(node) - CALL_KEYS
    if unknown:
        raise BankError(f"{where}: unknown keys in an expected call: {sorted(unknown)}")
    if not isinstance(node["functionName"], str) or not node["functionName"]:
        raise BankError(f"{where}: functionName must be a non-empty string")
    if "optional" in node and not isinstance(node["optional"], bool):
        raise BankError(f"{where}: optional must be true or false")
    for part in ("arguments", "result"):
        if part not in node:
            continue
        unknown_operators = operators_in(node[part]) - OPERATORS
        if unknown_operators:
            raise BankError(f"{where}: unknown operators {sorted(unknown_operators)} in {part}")
        _check_patterns(node[part], where)


def _check_patterns(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "$pattern":
                try:
                    compile_pattern(inner)
                except (ValueError, TypeError, re.error) as error:
                    raise BankError(f"{where}: bad $pattern {inner!r}: {error}") from error
            else:
                _check_patterns(inner, where)
    elif isinstance(value, list):
        for inner in value:
            _check_patterns(inner, where)


def _check_seats(setup: dict, where: str) -> None:
    """`resetSeats` and `freeSeat` name an event; a freed seat must be offered to the case's own
    account, so it needs that account (signedIn), in line (a join_waitlist call in `before`) and alone
    among the runner's accounts (resetSeats on the same event: earlier cases' accounts leave first)."""
    for key in ("resetSeats", "freeSeat", "door"):
        if key in setup and not (isinstance(setup[key], str) and setup[key].strip()):
            raise BankError(f"{where}: {key} is an event's id, such as evt-django-code-review-hours")
    if "door" in setup and setup.get("signedIn") is not True:
        raise BankError(f"{where}: door puts the case's account on the event's door staff: it needs signedIn")
    event = setup.get("freeSeat")
    if event is None:
        return
    if setup.get("signedIn") is not True:
        raise BankError(f"{where}: freeSeat offers the seat to the case's account: it needs signedIn")
    if setup.get("resetSeats") != event:
        raise BankError(
            f"{where}: freeSeat needs resetSeats on the same event ({event}), else an earlier case's "
            "account may be first in line and get the seat"
        )
    if not any(call.get("functionName") == "join_waitlist" for call in setup.get("before", [])):
        raise BankError(f"{where}: freeSeat needs the case's account waiting: a join_waitlist call in before")


def _check_meta(case: Case, where: str) -> None:
    meta = case.meta
    if not isinstance(meta.route, str) or not meta.route.startswith("/"):
        raise BankError(f"{where}: route must be a path such as /events/")
    if not meta.category:
        raise BankError(f"{where}: tags need one category of {CATEGORIES}")
    if not any(tag in LANGUAGES for tag in meta.tags):
        raise BankError(f"{where}: tags need the language of the message, one of {LANGUAGES}")
    if "NO" in meta.tags and case.expectedCall is not None:
        raise BankError(f"{where}: a NO case expects no call at all: expectedCall must be null")
    for pattern in meta.answerMustNot:
        if not isinstance(pattern, str):
            raise BankError(f"{where}: answerMustNot is a list of regular expressions")
        try:
            re.compile(pattern)
        except re.error as error:
            raise BankError(f"{where}: answerMustNot {pattern!r} is no regular expression: {error}") from None
    relax = meta.allowRelaxAfterZero
    if isinstance(relax, tuple) and (not relax or set(relax) - set(SEARCH_CONDITIONS)):
        raise BankError(f"{where}: allowRelaxAfterZero lists conditions of {SEARCH_CONDITIONS} (or is true)")
    unknown = set(meta.setup) - SETUP_KEYS
    if unknown:
        raise BankError(f"{where}: unknown setup keys {sorted(unknown)}")
    setup = meta.setup
    if not isinstance(setup.get("signedIn", False), bool):
        raise BankError(f"{where}: signedIn is true or false")
    block = setup.get("blockApi")
    if block is not None and (not isinstance(block, dict) or not isinstance(block.get("url"), str)):
        raise BankError(f"{where}: blockApi is {{url: glob, times?: n}}")
    before = setup.get("before", [])
    if not isinstance(before, list):
        raise BankError(f"{where}: before is a list of setup calls")
    for call in before:
        if (
            not isinstance(call, dict)
            or set(call) - {"functionName", "arguments"}
            or "functionName" not in call
        ):
            raise BankError(f"{where}: a setup call is {{functionName, arguments?}}")
    _check_seats(setup, where)
    flat = flatten_calls(case.expectedCall)
    overrides = list(meta.smokeArguments or ())
    if len(overrides) > len(flat):
        raise BankError(f"{where}: more smokeArguments than expected calls")
    for position, node in enumerate(flat):
        concrete = overrides[position] if position < len(overrides) else None
        if concrete is None and operators_in(node.get("arguments")):
            raise BankError(
                f"{where}: expected call {position} ({node['functionName']}) uses operators in its "
                "arguments; give smokeArguments for it"
            )
        if concrete is not None and operators_in(concrete):
            raise BankError(f"{where}: smokeArguments must be concrete values")
