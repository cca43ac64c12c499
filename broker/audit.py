"""The audit log of write decisions and redactions: ``<home>/audit.jsonl``, one JSON object per line.

Each record: time (UTC ISO), workspace, extension, connection, kind, operation, decision,
outcome (``ok`` or an error code), a title and the digest of the exact request. Argument values
are not logged (they can hold personal data); the digest identifies them.

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
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


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


FILE_NAME = "audit.jsonl"


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def in_home(cls, home: Path) -> AuditLog:
        """The audit log of the Helm home at ``home``."""
        return cls(home / FILE_NAME)

    def record(self, rec: AuditRecord) -> None:
        if not rec.time:
            rec = AuditRecord(**{**asdict(rec), "time": datetime.now(UTC).isoformat(timespec="seconds")})
        line = json.dumps(asdict(rec), ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)

    def records(self) -> Iterator[AuditRecord]:
        try:
            fh = self.path.open(encoding="utf-8")
        except FileNotFoundError:
            return
        with fh:
            for line in fh:
                try:
                    raw: Any = json.loads(line)
                    labels = raw.pop("fields", [])
                    if not isinstance(labels, list):
                        continue
                    yield AuditRecord(**raw, fields=tuple(str(label) for label in labels))
                except (ValueError, TypeError):
                    continue  # a torn last line after a crash; the rest stays readable
