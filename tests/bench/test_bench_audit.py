"""The audit log: one record written whole, under a lock, and fsynced, against a bare append+fsync.

Every write decision is recorded before Helm reports it (and before the write pipeline sends),
so this is what the record costs a confirmed write; the baseline is the same bytes appended to a
file with one ``os.write`` and one ``os.fsync`` — the least any durable record costs.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from broker.audit import AuditLog, AuditRecord
from tests.bench.conftest import Bench

RECORD = AuditRecord(
    "main", "com.example.issues", "gh", "http", "create_issue", "confirmed", "ok", "Create an issue",
    "d" * 64, "2026-12-01T10:00:00+00:00", fields=("Service", "Method", "URL"),
)  # fmt: skip


def test_an_fsynced_audit_record_costs_what_a_bare_append_and_fsync_costs(
    bench: Bench, tmp_path: Path
) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    line = (json.dumps(asdict(RECORD), ensure_ascii=False, sort_keys=True) + "\n").encode()
    raw_path = tmp_path / "raw.jsonl"

    def bare() -> None:
        fd = os.open(raw_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    helm = bench.time(lambda: log.record(RECORD), repeat=200)
    raw = bench.time(bare, repeat=200)
    bench.record("audit record, fsynced", helm, raw, note="vs os.write + os.fsync")
    assert helm > 0
