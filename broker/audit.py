"""The audit log of write decisions and redactions: ``<home>/audit.jsonl``, one JSON object per line.

Each record: time (UTC ISO), who asked (``requester``: extension, app, agent or helm, with the
workspace, its id in ``extension`` and its ``instance``), connection, kind, operation, decision,
outcome (``ok`` or an error code), a title, the digest of the exact request, and for a file
write the ``file`` (its path, never its content). Other argument values are not logged (they
can hold personal data); the digest identifies them.

* A confirmed write has two records: the decision, written before anything is sent (outcome
  ``sending``; when it cannot be written, nothing is sent), and the outcome after.

* A write decision is ``confirmed``, ``declined``, ``expired``, ``refused`` or ``cancelled``
  (the call was cancelled while the dialog was open); its title is the one the user saw in the
  dialog, and ``fields`` lists the labels of the fields the dialog showed, without their values.
* ``redacted`` says that Helm removed a secret it had sent from what a call returned (a read
  or a write; see ``broker.redact``). Its title says how many occurrences; it never holds the
  secret, and has no request digest.
* Coding agents (kind ``agent``) record their policy verdicts (``allowed``, ``refused``, the
  user's ``confirmed`` / ``declined`` / ``expired``, or ``cancelled`` for a question still open
  when the agent ended; outcome: the option Helm answered with), a
  ``decision_id`` (a sticky "allow always" grant is named by it in the records it covers) and
  the policy's ``reason``; and each file an agent read or wrote, with its outcome.
* A tool's builds (kind ``orchestrate``, connection ``$orchestrate``, operation ``build``,
  ``broker.orchestrate``): ``confirmed`` / ``starting`` before the agent is started (nothing
  starts when it cannot be written), then ``started`` or ``not started``, the build's id in
  ``decision_id``; ``declined`` / ``nothing started`` when the user did not start it,
  ``expired`` when the write beside it ran out, ``cancelled`` when the call was cancelled with
  the dialog open; the prompt named by ``request_digest`` only.
* When the organisation's decision point was asked (an agent's permission request, a write),
  its verdict and the ids of its decision and receipt (``point_*``).

After a record is written it is handed to the log's ``tap`` (the audit export,
``broker.export``), which never blocks and never fails the record.

Durability: every record is written whole and fsynced before ``record`` returns (``broker.jsonl``):
a decision Helm reports as recorded survives a crash and a power loss. A record that cannot be
written (a full disk, a read-only home) raises ``AuditWriteError`` and leaves nothing behind. A
torn record (a process killed mid-write) is moved to ``audit.jsonl.torn`` at the next record.

Reading skips a line that is not a record (not UTF-8, not JSON, nested too deep, not an object
with the record's fields) and counts it: ``scan`` says how many, and how many torn records were
set aside; one bad line never hides the others.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import MISSING, asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from broker import jsonl
from broker.errors import AuditWriteError
from broker.jsonutil import loads_strict

log = logging.getLogger("helm.audit")


@dataclass(frozen=True)
class AuditRecord:
    workspace: str
    extension: str
    connection: str
    kind: str
    operation: str
    decision: str
    outcome: str
    title: str = ""
    request_digest: str = ""
    time: str = ""
    decision_id: str = ""
    reason: str = ""
    fields: tuple[str, ...] = ()
    """The labels of the fields the dialog showed ("Service", "URL"…), in order — never their
    values, which can hold argument values."""
    requester: str = ""
    """Who asked: ``extension``, ``app``, ``agent`` or ``helm`` (``broker.context``); with
    ``extension`` (its id) and ``instance`` it names the requester."""
    instance: str = ""
    file: str = ""
    """For a file write: the root's name, then the path inside it (``notes/src/a.py``)."""
    point_verdict: str = ""
    """What the organisation's decision point answered (``broker.decision_point``): ``ALLOW``,
    ``DENY``, ``ESCALATE``, ``PENDING``, or ``ERROR`` when it gave no usable answer; "" when it
    was not asked. Its ``point_decision_id`` and ``point_receipt_id`` name its decision."""
    point_decision_id: str = ""
    point_receipt_id: str = ""

    @property
    def who(self) -> str:
        """Who asked, for a person: ``extension com.example.board``, ``agent claude``,
        ``helm helm.db-explorer`` (a record written before requesters were recorded: by its
        kind)."""
        role = self.requester or ("agent" if self.kind == "agent" else "extension")
        name = self.connection if role == "agent" else self.extension
        return f"{role} {name}"


FILE_NAME = "audit.jsonl"
_TEXT_FIELDS = frozenset(f.name for f in fields(AuditRecord)) - {"fields"}
_REQUIRED = frozenset(f.name for f in fields(AuditRecord) if f.default is MISSING)


@dataclass(frozen=True)
class AuditScan:
    """The whole log as read: its records, the lines that were not records, and the torn
    records set aside in the side file."""

    records: tuple[AuditRecord, ...]
    skipped: int = 0
    set_aside: int = 0

    def problems(self, path: Path) -> str:
        """One sentence on what could not be read, or "" when everything could."""
        said = []
        if self.skipped:
            said.append(f"{self.skipped} line(s) of {path} could not be read and were skipped")
        if self.set_aside:
            said.append(f"{self.set_aside} torn record(s) were set aside in {jsonl.torn_path(path)}")
        return "; ".join(said)


Tap = Callable[[AuditRecord], None]


class AuditLog:
    def __init__(self, path: Path, *, tap: Tap | None = None) -> None:
        """``tap`` hears each record once it is written (it must not block)."""
        self.path = path
        self.tap = tap
        self._lock = threading.Lock()

    @classmethod
    def in_home(cls, home: Path) -> AuditLog:
        """The audit log of the Helm home at ``home``."""
        return cls(home / FILE_NAME)

    def record(self, rec: AuditRecord) -> None:
        """Append ``rec`` whole and flush it to disk; ``AuditWriteError`` (an OSError) when it
        cannot be written — then nothing of it is in the log."""
        if not rec.time:
            rec = AuditRecord(**{**asdict(rec), "time": datetime.now(UTC).isoformat(timespec="seconds")})
        data = _line(asdict(rec))
        with self._lock:
            try:
                fd = jsonl.open_locked(self.path)
            except OSError as exc:
                raise AuditWriteError(self.path, exc, "the record was not written") from exc
            try:
                jsonl.append(fd, data, jsonl.torn_path(self.path), sync=True)
            except OSError as exc:
                raise AuditWriteError(self.path, exc, "the record was not written") from exc
            finally:
                os.close(fd)
        if self.tap is not None:
            try:
                self.tap(rec)
            except Exception:  # the export's bug must not turn a written record into a failure
                log.exception("the audit export failed to take a record")

    def records(self) -> Iterator[AuditRecord]:
        """Every record that can be read, oldest first (bad lines are skipped)."""
        for line in jsonl.lines(self.path):
            record = parse_line(line)
            if record is not None:
                yield record

    def scan(self) -> AuditScan:
        """The records, and how many lines could not be read (see the module docstring)."""
        records: list[AuditRecord] = []
        skipped = 0
        for line in jsonl.lines(self.path):
            record = parse_line(line)
            if record is not None:
                records.append(record)
            elif line.strip():
                skipped += 1
        return AuditScan(tuple(records), skipped, jsonl.count_lines(jsonl.torn_path(self.path)))


def _line(raw: dict[str, Any]) -> bytes:
    try:
        return (json.dumps(raw, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (from a server's title): escaped, still UTF-8
        return (json.dumps(raw, sort_keys=True) + "\n").encode("ascii")


def parse_line(line: bytes) -> AuditRecord | None:
    """The record of one line of the log, or None for a line that is not one."""
    try:
        raw: Any = loads_strict(line.decode("utf-8"))
    except ValueError:  # not UTF-8, not JSON, a repeated key, nested too deep
        return None
    if not isinstance(raw, dict) or not _REQUIRED <= raw.keys() <= _TEXT_FIELDS | {"fields"}:
        return None
    labels = raw.pop("fields", [])
    if not isinstance(labels, list) or not all(isinstance(v, str) for v in [*labels, *raw.values()]):
        return None
    return AuditRecord(**raw, fields=tuple(labels))
