"""The audit and activity logs: records written whole, torn tails set aside, bad lines counted."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli import main
from broker import atomic
from broker.activity import ActivityRecord, _LogFile
from broker.audit import AuditLog, AuditRecord
from broker.errors import AuditWriteError

Writer = Callable[[int, bytes], int]


def rec(title: str = "Send") -> AuditRecord:
    return AuditRecord("main", "com.example.x", "gh", "http", "create", "confirmed", "ok", title=title)


def full_after(limit: int, real: Writer) -> Writer:
    """An ``os.write`` that writes ``limit`` bytes in all, then finds the disk full."""
    left = [limit]

    def write(fd: int, data: bytes) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real(fd, bytes(data[: min(left[0], 7)]))  # short writes too
        left[0] -= n
        return n

    return write


def test_an_audit_record_is_written_whole_across_short_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    monkeypatch.setattr(atomic.os, "write", full_after(10_000, os.write))
    log.record(rec("é" * 50))
    assert [r.title for r in log.records()] == ["é" * 50]


def test_a_full_disk_raises_and_leaves_no_part_of_the_record_and_the_next_one_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(rec("first"))
    before = log.path.read_bytes()
    with monkeypatch.context() as m:
        m.setattr(atomic.os, "write", full_after(30, os.write))
        with pytest.raises(
            AuditWriteError, match=r"audit\.jsonl: No space left on device \(the record was not written\)"
        ):
            log.record(rec("lost"))
    assert log.path.read_bytes() == before
    log.record(rec("after space was freed"))
    scan = log.scan()
    assert [r.title for r in scan.records] == ["first", "after space was freed"]
    assert (scan.skipped, scan.set_aside) == (0, 0)


def test_every_audit_record_is_flushed_to_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    AuditLog(tmp_path / "audit.jsonl").record(rec())
    assert len(synced) == 1


def test_a_torn_audit_tail_is_set_aside_and_the_next_record_starts_a_fresh_line(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(rec("first"))
    torn = json.dumps({"title": "cut inside é"}, ensure_ascii=False).encode()[:-4]
    with log.path.open("ab") as fh:
        fh.write(torn)
    log.record(rec("next"))
    scan = log.scan()
    assert [r.title for r in scan.records] == ["first", "next"]
    assert (scan.skipped, scan.set_aside) == (0, 1)
    assert (tmp_path / "audit.jsonl.torn").read_bytes() == torn + b"\n"
    assert scan.problems(log.path) == f"1 torn record(s) were set aside in {tmp_path / 'audit.jsonl.torn'}"


BAD_LINES = [
    b"\xff\xfe not utf-8",
    b'{"title": "torn inside \xc3',
    b"null",
    b"[1, 2]",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"workspace": "w"}',
    b'{"workspace": 5, "extension": "e", "connection": "c", "kind": "k", "operation": "o", '
    b'"decision": "d", "outcome": "ok"}',
]


def test_each_bad_audit_line_is_skipped_and_counted_and_the_others_read(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.record(rec("first"))
    with log.path.open("ab") as fh:
        fh.write(b"\n".join(BAD_LINES) + b"\n")
    log.record(rec("last"))
    scan = log.scan()
    assert [r.title for r in scan.records] == ["first", "last"]
    assert [r.title for r in log.records()] == ["first", "last"]
    assert scan.skipped == len(BAD_LINES)


def test_helm_audit_shows_the_readable_records_and_says_how_many_lines_were_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    log = AuditLog.in_home(home)
    log.record(rec("first"))
    with log.path.open("ab") as fh:
        fh.write(b'{"title": "torn inside \xc3\n')
    log.record(rec("last"))
    for argv in (["audit"], ["audit", "--json"]):
        assert main([*argv, "--home", str(home)]) == 0
        out = capsys.readouterr()
        assert "first" in out.out and "last" in out.out
        assert out.err == f"helm: 1 line(s) of {log.path} could not be read and were skipped\n"


def activity(i: int) -> ActivityRecord:
    return ActivityRecord(1_700_000_000.0 + i, "main", "x", "x#d", "gh", "get", 1.0, "ok", i)


def test_a_full_disk_cuts_an_activity_batch_back_and_later_batches_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _LogFile(tmp_path / "activity.jsonl", 1024 * 1024)
    log.add(activity(1))
    log.flush()
    before = log.path.read_bytes()
    with monkeypatch.context() as m:
        m.setattr(atomic.os, "write", full_after(100, os.write))
        for i in range(2, 6):
            log.pending.append(activity(i))
        log.flush()  # a warning in the log, never an error for the calls
    assert log.path.read_bytes() == before
    log.pending.append(activity(9))
    log.flush()
    assert [r.bytes for r in log.read()] == [1, 9]


def test_a_torn_activity_tail_is_set_aside_at_the_next_batch(tmp_path: Path) -> None:
    log = _LogFile(tmp_path / "activity.jsonl", 1024 * 1024)
    log.pending.append(activity(1))
    log.flush()
    with log.path.open("ab") as fh:
        fh.write(activity(2).line().encode()[:40])
    log.pending.append(activity(3))
    log.flush()
    assert [r.bytes for r in log.read()] == [1, 3]
    assert (tmp_path / "activity.jsonl.torn").read_bytes() == activity(2).line().encode()[:40] + b"\n"


def test_a_deeply_nested_activity_line_is_skipped(tmp_path: Path) -> None:
    log = _LogFile(tmp_path / "activity.jsonl", 1024 * 1024)
    log.pending.append(activity(1))
    log.flush()
    with log.path.open("ab") as fh:
        fh.write(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    log.pending.append(activity(2))
    log.flush()
    assert [r.bytes for r in log.read()] == [1, 2]
