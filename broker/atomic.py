"""Atomic replacement of Helm's own files (settings, credentials fallback, layout, state…).

A save creates a temp file ``.NAME.<32 random hex>.tmp`` exclusively beside the target, mode
0600 whatever the target's mode will be, and holds ``flock`` on it while it lives; it writes
every byte, fsyncs, renames it over the target and fsyncs the folder. A reader sees the old
file or the new one, never a mix. A failure (a full disk, a read-only home) removes the temp
file and raises ``HomeWriteError``: the target is unchanged.

A process killed during a save leaves its temp file behind. ``remove_stale_temps`` (run at
every start for the folders of the home) removes each temp file it can prove a dead save made:
its name has Helm's pattern, it is a regular file owned by this user with one link, and no
live save holds its lock. A save that lost its fresh temp file to such a cleaner (between the
create and the lock) sees it unlinked and makes another, so a live save is never disturbed.
Temp names are random, so a leftover never blocks a later save (as a reused PID did).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import stat
from pathlib import Path

from broker.errors import HomeWriteError

TEMP_RE = re.compile(r"\..+\.(?:[0-9a-f]{32}|[0-9]+)\.tmp")
"""A temp file of a save: Helm's names, and the PID-numbered ones earlier Helms made."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``, looping on short writes (an OSError otherwise)."""
    view = memoryview(data)
    while view:
        done = os.write(fd, view)
        if done <= 0:
            raise OSError(28, os.strerror(28))  # nothing written and no error: the disk is full
        view = view[done:]


def _open_temp(path: Path) -> tuple[Path, int]:
    """A new, locked temp file beside ``path`` (see the module docstring)."""
    for _ in range(8):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(16)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.fstat(fd).st_nlink > 0:
            return tmp, fd
        os.close(fd)  # a start-up cleaner took it before the lock: make another
    raise OSError(17, "could not make a temporary file", str(path.parent))


def write_atomic(path: Path, data: bytes, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    Raises ``HomeWriteError`` (an ``OSError``) when it cannot; ``path`` is then unchanged and
    no temp file is left.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp, fd = _open_temp(path)
    except OSError as exc:
        raise HomeWriteError(path, exc) from exc
    try:
        try:
            write_all(fd, data)
            if mode != 0o600:
                os.fchmod(fd, mode)
            os.fsync(fd)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        finally:
            os.close(fd)
        _sync_folder(path.parent)
    except OSError as exc:
        raise HomeWriteError(path, exc) from exc


def _sync_folder(folder: Path) -> None:
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove_stale_temps(folder: Path) -> list[str]:
    """Remove the temp files dead saves left in ``folder``; return their names."""
    try:
        names = [n for n in os.listdir(folder) if TEMP_RE.fullmatch(n)]
    except OSError:
        return []
    return [name for name in names if _remove_if_dead(folder / name)]


def _remove_if_dead(tmp: Path) -> bool:
    try:
        fd = os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    except OSError:
        return False  # gone (its save finished) or not a file Helm may touch
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_nlink != 1:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a live save
        try:
            now = os.stat(tmp, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            return False
        tmp.unlink()
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
