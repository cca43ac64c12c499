"""The record of the temp files Helm made, so that a write removes only its own leftovers.

A write first makes an entry ``<dev>-<ino>-<16 hex>`` in ``<home>/write-temps/`` (the folder's
identity and the temp's random hex) and keeps ``flock`` on it while the write lives; then it
creates its temp file ``.helm-write-<16 hex>.tmp`` exclusively in the target's folder and writes
the temp file's own device and inode into the entry. When the write ends it removes the entry (its
temp file was renamed over the target or removed).

The next write into a folder takes each entry of that folder whose lock it can get (its writer
is gone, e.g. killed) and removes the temp file only if it is still the very file recorded
(same device and inode, a regular file); then it removes the entry. An entry whose writer died
before it recorded the inode names a temp file that only that writer can have made: the name's
hex is known only in Helm's home, and the exclusive create fails on a file that was already there.
Such a temp file is removed when it is a regular file with one link, owned by Helm's user and
changed after the entry was made. A file that merely looks like a temp file has no entry, or
another inode, or is older than the entry, and is never touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from broker.errors import CallError, ErrorCode
from broker.kinds.files.safe import FileId, file_id

LEDGER_FOLDER = "write-temps"
TEMP_PREFIX = ".helm-write-"
TEMP_SUFFIX = ".tmp"

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def temp_name(hex16: str) -> str:
    return f"{TEMP_PREFIX}{hex16}{TEMP_SUFFIX}"


@dataclass
class Claim:
    """A live write's entry: locked until ``release``."""

    path: Path
    fd: int

    def release(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.close(self.fd)


class TempLedger:
    """The entries under ``<home>/write-temps`` (see the module docstring)."""

    def __init__(self, home: Path) -> None:
        self.folder = home / LEDGER_FOLDER

    def _entry(self, folder: FileId, hex16: str) -> Path:
        return self.folder / f"{folder[0]}-{folder[1]}-{hex16}"

    def claim(self, folder: FileId, hex16: str) -> Claim:
        """Make the locked entry for temp file ``hex16`` in ``folder``, before the file exists."""
        entry = self._entry(folder, hex16)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            for _ in range(4):
                fd = os.open(entry, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX)
                # A cleaner may have taken the fresh (still empty) entry for a dead writer's and
                # removed it before we locked it; then make it again.
                if os.fstat(fd).st_nlink > 0:
                    return Claim(entry, fd)
                os.close(fd)
        except OSError as exc:
            raise CallError(
                ErrorCode.UNAVAILABLE, "Helm could not record its temporary file in its home folder"
            ) from exc
        raise CallError(ErrorCode.UNAVAILABLE, "Helm could not record its temporary file in its home folder")

    @staticmethod
    def record(claim: Claim, temp: FileId) -> None:
        """Write the identity of the temp file ``claim`` stands for, once it exists."""
        try:
            os.write(claim.fd, f"{temp[0]} {temp[1]}\n".encode())
        except OSError as exc:
            raise CallError(
                ErrorCode.UNAVAILABLE, "Helm could not record its temporary file in its home folder"
            ) from exc

    def clean(self, parent: int, folder: FileId) -> list[str]:
        """Remove the temp files of dead writers in ``parent`` (whose identity is ``folder``)."""
        prefix = f"{folder[0]}-{folder[1]}-"
        try:
            hexes = [n[len(prefix) :] for n in os.listdir(self.folder) if n.startswith(prefix)]
        except FileNotFoundError:
            return []
        removed: list[str] = []
        for hex16 in hexes:
            if self._clean_one(parent, self._entry(folder, hex16), temp_name(hex16)):
                removed.append(temp_name(hex16))
        return removed

    def _clean_one(self, parent: int, entry: Path, name: str) -> bool:
        try:
            fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | _CLOEXEC)
        except OSError:
            return False  # removed by its writer or another cleaner meanwhile
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False  # a live writer
            recorded = _parse(os.pread(fd, 64, 0))
            if recorded is None:
                removed = _unlink_unrecorded(parent, name, os.fstat(fd).st_mtime_ns)
            else:
                removed = _unlink_if(parent, name, recorded)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry)
            return removed
        finally:
            os.close(fd)


def _parse(raw: bytes) -> FileId | None:
    parts = raw.decode("ascii", "replace").split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None  # a writer that died before it recorded its temp file's identity
    return (int(parts[0]), int(parts[1]))


def _unlink_if(parent: int, name: str, recorded: FileId) -> bool:
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode) or file_id(st) != recorded:
        return False  # not the file Helm made (renamed over the target, or someone else's)
    return _unlink(parent, name)


def _unlink_unrecorded(parent: int, name: str, entry_made_ns: int) -> bool:
    """The temp file of a writer that died between creating it and recording its identity."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return False  # it died before creating it
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_uid != os.getuid():
        return False
    if st.st_ctime_ns < entry_made_ns:
        return False  # the name was taken before the entry: not a file this writer made
    return _unlink(parent, name)


def _unlink(parent: int, name: str) -> bool:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=parent)
        return True
    return False
