"""Append-only JSON-lines logs in the home (audit, activity): records are written whole.

``append`` opens the log, takes ``flock`` on it (so two Helm processes never interleave their
records), repairs a torn tail, writes every byte of ``data`` and, with ``sync``, fsyncs it.
When the write fails (a full disk) the log is cut back to where it was: no record is ever half
written by a failure, and the error is raised.

A torn tail — the last line of a process killed in the middle of a write, or of a failure whose
cut could not be made — is repaired before the next append: its bytes are moved to the log's
side file (``<log>.torn``, one line per torn record) and the log is cut back to its last whole
line, so the next record starts on a fresh line.

``lines`` reads a log line by line, bytes included: a bad line never hides another.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from broker.atomic import write_all

TORN_SUFFIX = ".torn"
MAX_TORN = 1024 * 1024
"""The most bytes of one torn tail kept in the side file (a record is far smaller)."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def torn_path(log: Path) -> Path:
    return log.with_name(log.name + TORN_SUFFIX)


def open_locked(path: Path) -> int:
    """``path`` opened for appending (created 0600) under an exclusive ``flock``.

    A log renamed while this waited for the lock (the activity log's rotation) is opened again.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st, now = os.fstat(fd), os.stat(path)
        except FileNotFoundError:
            os.close(fd)
            continue
        except BaseException:
            os.close(fd)
            raise
        if (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino):
            return fd
        os.close(fd)


def append(fd: int, data: bytes, side: Path, *, sync: bool) -> None:
    """Write ``data`` whole at the end of the locked log ``fd`` (see the module docstring)."""
    size = repair_tail(fd, side)
    try:
        write_all(fd, data)
        if sync:
            os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size)
        raise


def repair_tail(fd: int, side: Path) -> int:
    """Move a torn last line of the locked log ``fd`` to ``side``; return the log's new size."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    start = _line_start(fd, size)
    torn = os.pread(fd, min(size - start, MAX_TORN), start)
    out = os.open(side, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC, 0o600)
    try:
        write_all(out, torn + b"\n")
        os.fsync(out)
    finally:
        os.close(out)
    os.ftruncate(fd, start)
    return start


def _line_start(fd: int, size: int) -> int:
    """The offset just after the last newline before ``size`` (0 when there is none)."""
    end = size
    while end > 0:
        begin = max(0, end - 65536)
        found = os.pread(fd, end - begin, begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        end = begin
    return 0


def lines(path: Path) -> Iterator[bytes]:
    """The lines of ``path`` without their newlines (none when it does not exist)."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            yield line.rstrip(b"\n")


def count_lines(path: Path) -> int:
    """How many lines ``path`` holds (0 when it does not exist)."""
    return sum(1 for line in lines(path) if line)
