"""What a sink receives: one export entry per record, version 1 of a documented schema.

The schema is ``resources/audit-export.schema.json`` (docs/teams.md explains each field). Every
entry has ``schema`` (``"helm.export/1"``), ``type`` and ``time``:

* ``audit`` — one record of the home's audit log (``broker.audit``): workspace, requester
  (role, id, instance), extension, connection, kind, operation, decision, outcome, the digest
  of the exact request, Helm's decision id and reason, the labels of the fields the dialog
  showed, and what the organisation's decision point answered (when it was asked).
* ``activity`` — one finished call (``broker.activity``): who, through what, outcome, duration,
  size of the answer.
* ``dropped`` — how many entries this sink lost while it was down and its queue was full, and
  between which times.

Built from an allowlist of fields, never from the whole record: argument values, the dialog's
title (it can quote an argument), a file's path, Helm's messages and every secret stay out.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from typing import Any

from broker.activity import ActivityRecord
from broker.audit import AuditRecord

SCHEMA = "helm.export/1"
APP_NAME = "helm"
INFO, NOTICE, WARNING = 6, 5, 4
_REFUSALS = frozenset({"refused", "declined", "expired", "cancelled"})

Entry = dict[str, Any]


def audit_entry(rec: AuditRecord) -> Entry:
    """The export entry of one audit record."""
    role = rec.requester or ("agent" if rec.kind == "agent" else "extension")
    entry: Entry = {
        "schema": SCHEMA,
        "type": "audit",
        "time": rec.time or _now(),
        "workspace": rec.workspace,
        "requester": {
            "role": role,
            "id": rec.connection if role == "agent" else rec.extension,
            "instance": rec.instance,
        },
        "extension": rec.extension,
        "connection": rec.connection,
        "kind": rec.kind,
        "operation": rec.operation,
        "decision": rec.decision,
        "outcome": rec.outcome,
        "request_digest": rec.request_digest,
        "decision_id": rec.decision_id,
        "reason": rec.reason,
        "fields": list(rec.fields),
    }
    if rec.point_verdict:
        entry["decision_point"] = {
            "verdict": rec.point_verdict,
            "decision_id": rec.point_decision_id,
            "receipt_id": rec.point_receipt_id,
        }
    return entry


def activity_entry(rec: ActivityRecord) -> Entry:
    """The export entry of one finished call (never its message: it can name an argument)."""
    return {
        "schema": SCHEMA,
        "type": "activity",
        "time": datetime.fromtimestamp(rec.time, UTC).isoformat(timespec="milliseconds"),
        "workspace": rec.workspace,
        "requester": {"role": rec.requester, "id": rec.extension, "instance": rec.instance},
        "extension": rec.extension,
        "connection": rec.connection,
        "operation": rec.operation,
        "outcome": rec.outcome,
        "duration_ms": round(rec.duration_ms, 3),
        "bytes": rec.bytes,
    }


def dropped_entry(count: int, first: str, last: str) -> Entry:
    """The notice that ``count`` entries were dropped, the first at ``first``, the last at ``last``."""
    return {
        "schema": SCHEMA,
        "type": "dropped",
        "time": _now(),
        "dropped": count,
        "first": first,
        "last": last,
    }


def json_text(entry: Entry) -> str:
    """``entry`` as one line of compact JSON, ASCII only (other characters escaped)."""
    return json.dumps(entry, ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def severity(entry: Entry) -> int:
    """The syslog severity: a refusal or a lost entry is a notice or a warning, the rest info."""
    if entry["type"] == "dropped" or entry.get("decision") == "redacted":
        return WARNING
    if entry.get("decision") in _REFUSALS or entry.get("outcome") not in ("ok", "sending", None):
        return NOTICE
    return INFO


def syslog_message(entry: Entry, facility: int, host: str | None = None) -> bytes:
    """``entry`` as one RFC 5424 message: ``<PRI>1 TIME HOST helm PID TYPE - JSON``.

    The message is the entry's JSON in ASCII, so it needs no byte-order mark; there is no
    structured data (everything is in the JSON)."""
    pri = facility * 8 + severity(entry)
    header = f"<{pri}>1 {entry['time']} {host or hostname()} {APP_NAME} {os.getpid()} {entry['type']} -"
    return f"{header} {json_text(entry)}".encode("ascii")


def hostname() -> str:
    """This machine's name as RFC 5424 allows it (printable ASCII, no space, 255 at most)."""
    name = "".join(c for c in socket.gethostname() if "!" <= c <= "~")[:255]
    return name or "-"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
