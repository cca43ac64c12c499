"""The record of the temp files Helm made, so that a write removes only its own leftovers.

A write first makes an entry ``<dev>-<ino>-<16 hex>`` in ``<home>/write-temps/`` (the folder's
identity and the temp's random hex) and keeps ``flock`` on it while the write lives, with the
folder's path as a first line (``@`` and a JSON string); then it creates its temp file
``.helm-write-<16 hex>.tmp`` exclusively in the target's folder and writes the temp file's own
device and inode into the entry. When the write ends it removes the entry (its temp file was
renamed over the target or removed).

The next write into a folder takes each entry of that folder whose lock it can get (its writer
is gone, e.g. killed) and removes the temp file only if it is still the very file recorded
(same device and inode, a regular file); then it removes the entry. An entry whose writer died
before it recorded the inode names a temp file that only that writer can have made: the name's
hex is known only in Helm's home, and the exclusive create fails on a file that was already there.
Such a temp file is removed when it is a regular file with one link, owned by Helm's user and
changed after the entry was made (or the entry holds a part of the identity: its writer had made
the file). A file that merely looks like a temp file has no entry, or
another inode, or is older than the entry, and is never touched.

At every start (``clean_all``) the same is done for every entry whose lock is free, in the folder
its path names — only when that folder is still the one the entry's name identifies (device and
inode), so a folder moved or replaced since is left to the next write into it. An entry without a
path was made by a writer that died before it could create its temp file, and is removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from broker.errors import CallError, ErrorCode
from broker.fs.safe import FileId, file_id

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

    def claim(self, folder: FileId, hex16: str, parent: int | None = None) -> Claim:
        """Make the locked entry for temp file ``hex16`` in ``folder`` (open as ``parent``, whose
        path the entry keeps for the start-up clean), before the file exists."""
        entry = self._entry(folder, hex16)
        where = b"" if parent is None else _path_line(parent)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            for _ in range(4):
                fd = os.open(entry, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX)
                # A cleaner may have taken the fresh (still empty) entry for a dead writer's and
                # removed it before we locked it; then make it again.
                if os.fstat(fd).st_nlink > 0:
                    if where:
                        os.write(fd, where)
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
            raw = os.pread(fd, _MAX_ENTRY, 0)
            recorded = _parse(raw)
            if recorded is None:
                # A torn identity line was begun after the temp file was made: it is this writer's.
                made_ns = 0 if _begun_record(raw) else os.fstat(fd).st_mtime_ns
                removed = _unlink_unrecorded(parent, name, made_ns)
            else:
                removed = _unlink_if(parent, name, recorded)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry)
            return removed
        finally:
            os.close(fd)

    def clean_all(self) -> list[str]:
        """At start: remove the temp files of every dead writer (see the module docstring)."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        removed: list[str] = []
        for name in names:
            folder_text, _, hex16 = name.rpartition("-")
            dev, _, ino = folder_text.partition("-")
            ok = dev.isdigit() and ino.isdigit() and len(hex16) == 16
            if ok and self._clean_at_start(self.folder / name, (int(dev), int(ino)), hex16):
                removed.append(temp_name(hex16))
        return removed

    def _clean_at_start(self, entry: Path, folder: FileId, hex16: str) -> bool:
        try:
            raw = entry.read_bytes()[:_MAX_ENTRY]
        except OSError:
            return False
        where = _folder_of(raw)
        if where is None:
            if _parse(raw) is None and not _locked(entry):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry)  # its writer died before it made the temp file
            return False
        try:
            parent = os.open(where, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        except OSError:
            return False  # the folder is gone or unreachable: left for a write into it
        try:
            if file_id(os.fstat(parent)) != folder:
                return False  # another folder has that path now
            return self._clean_one(parent, entry, temp_name(hex16))
        finally:
            os.close(parent)


_MAX_ENTRY = 64 * 1024


def _path_line(parent: int) -> bytes:
    """``@"<the folder's path>"`` and a newline, or b"" where the system cannot say it."""
    try:
        where = os.readlink(f"/proc/self/fd/{parent}")
    except OSError:
        getpath = getattr(fcntl, "F_GETPATH", None)
        if getpath is None:
            return b""
        try:
            where = os.fsdecode(fcntl.fcntl(parent, getpath, bytes(1024)).split(b"\0", 1)[0])
        except OSError:
            return b""
    return b"@" + json.dumps(where).encode() + b"\n"


def _folder_of(raw: bytes) -> str | None:
    first = raw.split(b"\n", 1)[0]
    if not first.startswith(b"@"):
        return None
    try:
        where = json.loads(first[1:])
    except ValueError:
        return None
    return where if isinstance(where, str) and where.startswith("/") else None


def _locked(entry: Path) -> bool:
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | _CLOEXEC)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _begun_record(raw: bytes) -> bool:
    """Whether the entry holds a part of the temp file's identity (its writer died writing it)."""
    return any(line and not line.startswith(b"@") for line in raw.split(b"\n"))


def _parse(raw: bytes) -> FileId | None:
    for line in raw.split(b"\n")[:-1]:  # whole lines only: a torn one is not an identity
        parts = line.decode("ascii", "replace").split()
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return (int(parts[0]), int(parts[1]))
    return None  # a writer that died before it recorded its temp file's identity


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
