"""Fixtures: envelopes recorded from real connections, served again without them.

``helm dev DIR --record FIXTURES`` saves each call's envelope; ``helm dev DIR --replay
FIXTURES`` and ``helm ext test DIR --fixtures FIXTURES`` answer calls from them. A fixtures
folder holds one plain JSON file per connection, named after the connection's id, for
authors to read, edit and commit (docs/authors.md shows the format)::

    {
      "version": 1,
      "connection": "gh",
      "calls": [
        {"operation": "issues", "args": {"owner": "me", "limit": 20},
         "envelope": {"ok": true, "status": 200, "data": [], "error": null}},
        {"operation": "issues", "envelope": {"ok": true, "status": 200, "data": [], "error": null}}
      ]
    }

A call is answered by the entry of its operation whose ``args`` equal its arguments (key order
does not matter), else by the first entry of its operation that has no ``args`` (any
arguments). Recording replaces the entry with the same operation and arguments, or adds one;
each operation keeps its ``MAX_PER_OPERATION`` latest entries. Envelopes Helm itself decides
(``NOT_RECORDED``: a refusal, a declined or unconfirmed write, the rate limit) are not recorded:
replay makes those decisions again.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import ErrorCode, FixtureError
from broker.jsonutil import DuplicateKeyError, canonical, loads_strict
from broker.manifest import published_schema

FIXTURE_VERSION = 1
MAX_PER_OPERATION = 50
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A fixture file larger than this is refused rather than read (each envelope is ≤ 1 MiB)."""


@functools.cache
def connection_id_rule() -> re.Pattern[str]:
    """The manifest schema's rule for a connection id (``$defs/name``): no ``/``, no leading
    dot, so an id is also a safe file name."""
    return re.compile(published_schema()["$defs"]["name"]["pattern"])


NOT_RECORDED = frozenset(
    {ErrorCode.REFUSED, ErrorCode.DECLINED, ErrorCode.CONFIRMATION_REQUIRED, ErrorCode.RATE_LIMITED}
)
CODES = frozenset(code.value for code in ErrorCode)


@dataclass(frozen=True)
class Fixture:
    """One recorded answer: ``args`` None answers the operation whatever its arguments."""

    operation: str
    args: Mapping[str, Any] | None
    envelope: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"operation": self.operation}
        if self.args is not None:
            entry["args"] = dict(self.args)
        entry["envelope"] = dict(self.envelope)
        return entry


def envelope_problem(envelope: Any) -> str | None:
    """Why ``envelope`` is not one a page could receive, or None."""
    if not isinstance(envelope, Mapping) or not isinstance(envelope.get("ok"), bool):
        return 'must be an object with "ok": true or false'
    if envelope["ok"]:
        return None
    error = envelope.get("error")
    if not isinstance(error, Mapping) or not isinstance(error.get("message"), str):
        return 'a failed envelope needs "error": {"code": …, "message": …}'
    if error.get("code") not in CODES:
        return f"error.code {error.get('code')!r} is not one of Helm's error codes"
    return None


def recordable(connection: str, envelope: Any) -> bool:
    """Whether an envelope is worth recording (see ``NOT_RECORDED``)."""
    if not connection_id_rule().match(connection) or envelope_problem(envelope) is not None:
        return False
    error = envelope.get("error")
    return bool(envelope["ok"]) or error.get("code") not in NOT_RECORDED


class FixtureBook:
    """The fixture files of one folder. Files are read at every lookup, so an edit made while
    ``helm dev`` runs answers the next call."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def file(self, connection: str) -> Path:
        if not connection_id_rule().match(connection):
            raise FixtureError(f"{connection!r} is not a connection id")
        return self.folder / f"{connection}.json"

    def read(self, connection: str) -> tuple[Fixture, ...]:
        """The entries for ``connection`` (none when it has no file)."""
        file = self.file(connection)
        try:
            if file.stat().st_size > MAX_FILE_BYTES:
                raise FixtureError(f"{file}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ()
        except (OSError, UnicodeDecodeError) as exc:
            raise FixtureError(f"{file}: cannot be read ({exc.__class__.__name__})") from exc
        try:
            raw = loads_strict(text)
        except (DuplicateKeyError, ValueError, RecursionError) as exc:
            raise FixtureError(f"{file}: not valid JSON ({exc})") from exc
        return parse(raw, connection, file)

    def find(self, connection: str, operation: str, args: Mapping[str, Any]) -> Fixture | None:
        entries = [f for f in self.read(connection) if f.operation == operation]
        wanted = canonical(dict(args))
        for entry in entries:
            if entry.args is not None and canonical(dict(entry.args)) == wanted:
                return entry
        return next((entry for entry in entries if entry.args is None), None)

    def answered(self, connection: str, operation: str, args: Mapping[str, Any], envelope: Any) -> bool:
        """Whether ``envelope`` is exactly what the fixtures answer this call with (a failure
        recorded on purpose, not one of replay's own)."""
        try:
            found = self.find(connection, operation, args)
        except FixtureError:
            return False
        return found is not None and canonical(dict(found.envelope)) == canonical(envelope)

    def record(self, connection: str, operation: str, args: Mapping[str, Any], envelope: Any) -> bool:
        """Save ``envelope`` as the answer to this call; False when it is not recorded."""
        if not recordable(connection, envelope):
            return False
        new = Fixture(operation, dict(args), dict(envelope))
        key = (operation, canonical(dict(args)))
        kept = [f for f in self.read(connection) if _key(f) != key] + [new]
        excess = sum(f.operation == operation for f in kept) - MAX_PER_OPERATION
        if excess > 0:  # the oldest entries of this operation go
            oldest = [i for i, f in enumerate(kept) if f.operation == operation][:excess]
            kept = [f for i, f in enumerate(kept) if i not in oldest]
        document = {
            "version": FIXTURE_VERSION,
            "connection": connection,
            "calls": [f.to_json() for f in kept],
        }
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        write_atomic(self.file(connection), text.encode("utf-8"), mode=0o644)
        return True

    def problems(self) -> list[str]:
        """Every problem of every fixture file in the folder (for a check at start-up)."""
        if not self.folder.is_dir():
            return [f"{self.folder} is not a folder"]
        found: list[str] = []
        for file in sorted(self.folder.glob("*.json")):
            try:
                self.read(file.stem)
            except FixtureError as exc:
                found.append(str(exc))
        return found


def _key(fixture: Fixture) -> tuple[str, str | None]:
    return fixture.operation, None if fixture.args is None else canonical(dict(fixture.args))


def parse(raw: Any, connection: str, file: Path) -> tuple[Fixture, ...]:
    """A fixture document → its entries; ``FixtureError`` names the file and the JSON path."""

    def bad(path: str, message: str) -> FixtureError:
        return FixtureError(f"{file}: {path}: {message}")

    if not isinstance(raw, dict):
        raise bad("$", "must be an object with version, connection and calls")
    if raw.get("version") != FIXTURE_VERSION:
        raise bad("$.version", f"must be {FIXTURE_VERSION}")
    if raw.get("connection") != connection:
        raise bad("$.connection", f"must be {connection!r}, the file's name")
    calls = raw.get("calls")
    if not isinstance(calls, list):
        raise bad("$.calls", "must be a list")
    entries = []
    for i, entry in enumerate(calls):
        at = f"$.calls[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("operation"), str):
            raise bad(at, 'must be an object with "operation" and "envelope"')
        if set(entry) - {"operation", "args", "envelope"}:
            raise bad(at, f"unknown field(s) {sorted(set(entry) - {'operation', 'args', 'envelope'})}")
        args = entry.get("args")
        if "args" in entry and not isinstance(args, dict):
            raise bad(f"{at}.args", "must be an object (leave it out to answer any arguments)")
        if (problem := envelope_problem(entry.get("envelope"))) is not None:
            raise bad(f"{at}.envelope", problem)
        entries.append(Fixture(entry["operation"], args, entry["envelope"]))
    return tuple(entries)
