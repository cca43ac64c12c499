"""write: replace one existing file atomically, only if it still has the expected hash.

The replacement: a temp file named ``.helm-write-<16 hex>.tmp`` is created exclusively in the
target's folder (relative to the folder's descriptor) and recorded in the temp ledger in Helm's
home, written, given the target's permission bits (and owner, where Helm may), fsynced, renamed
over the target with ``os.replace`` on the same folder descriptor, and the folder is fsynced. A
reader sees the old file or the new one, never a mix; a crash leaves the old file and at most a
temp file, which the next start of Helm, or the next write into the folder, removes (``ledger``).

Read-only means the mode bits: a file whose owner has no write bit is never replaced, whoever
runs Helm (root may write anything, so ``os.access`` alone would let root overwrite it).

Concurrency: writes to one file are serialized inside the process by a lock, and across
processes by ``flock`` on the target; the hash of the current content is compared inside that
critical section, so of two writes with the same expected hash exactly one wins and the other
gets ``conflict``.

With ``create`` (for callers that may make new files), a missing file is made the same way, but
linked in under its name with ``os.link``, which fails rather than replace a file that appeared
meanwhile.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import secrets
import stat
import threading
import time

from broker.errors import CallError, ErrorCode
from broker.fs.ledger import Claim, TempLedger, temp_name
from broker.fs.reading import MAX_FILE_BYTES, too_large
from broker.fs.safe import (
    OpenRoot,
    RelPath,
    file_id,
    hard_linked,
    open_leaf,
    open_parent,
    read_upto,
    refused,
)

TEMP_RE = re.compile(r"\.helm-write-[0-9a-f]{16}\.tmp")
LOCK_WAIT = 10.0
"""Seconds a write waits for another writer of the same file before giving up."""
NEW_FILE_MODE = 0o666
"""Mode bits of a created file, before the process umask (as any program creating a file)."""

# Striped locks: one per file would need a registry with cleanup; 64 stripes serialize
# writes to one file (and, rarely, two unrelated files that share a stripe).
_STRIPES = tuple(threading.Lock() for _ in range(64))


def replace_file(
    root: OpenRoot,
    path: RelPath,
    data: bytes,
    expected_sha256: str | None,
    ledger: TempLedger,
    *,
    create: bool = False,
) -> str:
    """Replace the file at ``path`` with ``data``; return the new sha256.

    ``expected_sha256`` None skips the hash check; ``create`` makes a missing file instead of
    refusing it (never with an expected hash: then a missing file is a ``conflict``).
    """
    parent = open_parent(root, path)
    try:
        pst = os.fstat(parent)
        stripe = _STRIPES[hash((pst.st_dev, pst.st_ino, path.name)) % len(_STRIPES)]
        if not stripe.acquire(timeout=LOCK_WAIT):
            raise CallError(ErrorCode.UNAVAILABLE, f"{path.text!r} is busy with another write; try again")
        try:
            ledger.clean(parent, file_id(pst))
            if create and _missing(parent, path):
                if expected_sha256 is not None:
                    raise CallError(ErrorCode.CONFLICT, f"{path.text!r} no longer exists; read it again")
                _swap_in(parent, path, data, None, ledger)
            else:
                _replace_locked(parent, path, data, expected_sha256, ledger)
        finally:
            stripe.release()
    finally:
        os.close(parent)
    return hashlib.sha256(data).hexdigest()


def _missing(parent: int, path: RelPath) -> bool:
    try:
        os.stat(path.name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return True
    return False


def _check_target(path: RelPath, parent: int, st: os.stat_result) -> None:
    if st.st_nlink > 1:
        raise hard_linked(path)
    if not st.st_mode & stat.S_IWUSR or not os.access(
        path.name, os.W_OK, dir_fd=parent, follow_symlinks=False
    ):
        raise refused(f"{path.text!r} is read-only")
    if st.st_size > MAX_FILE_BYTES:
        raise too_large(path)


def _replace_locked(
    parent: int, path: RelPath, data: bytes, expected: str | None, ledger: TempLedger
) -> None:
    fd, st = _lock_target(parent, path)
    try:
        _check_target(path, parent, st)
        current = read_upto(fd, MAX_FILE_BYTES + 1)
        if len(current) > MAX_FILE_BYTES:
            raise too_large(path)
        if expected is not None and hashlib.sha256(current).hexdigest() != expected:
            raise CallError(
                ErrorCode.CONFLICT,
                f"{path.text!r} changed since it was read (its sha256 differs); read it again",
            )
        _swap_in(parent, path, data, st, ledger)
    finally:
        os.close(fd)  # releases the flock


def _lock_target(parent: int, path: RelPath) -> tuple[int, os.stat_result]:
    """Open the target and hold ``flock`` on it, making sure the name still points to it.

    Another writer may have renamed a new file over the name while we waited for the lock on
    the old one; then the lock is worthless and we start again on the new file.
    """
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        fd, st = open_leaf(parent, path)
        try:
            _flock_until(fd, deadline, path)
            try:
                now = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                raise refused(f"{path.text!r} does not exist") from None
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                return fd, os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _flock_until(fd: int, deadline: float, path: RelPath) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise CallError(
                    ErrorCode.UNAVAILABLE, f"{path.text!r} is locked by another writer; try again"
                ) from None
            time.sleep(0.005)  # another process holds it for one short write


def _create_temp(parent: int, mode: int, ledger: TempLedger) -> tuple[str, int, Claim]:
    """A new temp file in ``parent``, its entry in the ledger made before the file exists."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    folder = file_id(os.fstat(parent))
    for _ in range(16):
        hex16 = secrets.token_hex(8)
        claim = ledger.claim(folder, hex16, parent)
        try:
            fd = os.open(temp_name(hex16), flags, mode, dir_fd=parent)
        except FileExistsError:
            claim.release()
            continue
        except BaseException:
            claim.release()
            raise
        return hex16, fd, claim
    raise CallError(ErrorCode.UNAVAILABLE, "Helm could not create a temporary file for the write")


def _keep_owner(fd: int, target: os.stat_result) -> None:
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) == (target.st_uid, target.st_gid):
        return
    with contextlib.suppress(PermissionError):
        os.fchown(fd, target.st_uid, target.st_gid)


def _still_there(parent: int, path: RelPath, target: os.stat_result) -> None:
    """The name must still be the file we locked and checked (another program may move it)."""
    try:
        now = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        now = None
    if now is None or (now.st_dev, now.st_ino) != (target.st_dev, target.st_ino):
        raise CallError(
            ErrorCode.CONFLICT, f"{path.text!r} was moved or replaced during the write; read it again"
        )


def _swap_in(
    parent: int, path: RelPath, data: bytes, target: os.stat_result | None, ledger: TempLedger
) -> None:
    """Write ``data`` to a recorded temp file and put it in place of ``target`` (None: create)."""
    hex16, fd, claim = _create_temp(parent, 0o600 if target is not None else NEW_FILE_MODE, ledger)
    tmp = temp_name(hex16)
    try:
        ledger.record(claim, file_id(os.fstat(fd)))
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        claim.release()
        raise
    renamed = False
    try:
        _fill(fd, data, target)
        renamed = _put_in_place(parent, path, tmp, target)
    finally:
        os.close(fd)
        if not renamed:  # after a link or a failure the temp name is still ours to remove
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)
        claim.release()
    try:
        os.fsync(parent)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF):  # folders some filesystems cannot fsync
            raise


def _fill(fd: int, data: bytes, target: os.stat_result | None) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    if target is not None:
        # Permission bits only: a rewritten text file never becomes setuid/setgid.
        os.fchmod(fd, stat.S_IMODE(target.st_mode) & 0o777)
        _keep_owner(fd, target)
    os.fsync(fd)


def _put_in_place(parent: int, path: RelPath, tmp: str, target: os.stat_result | None) -> bool:
    """Rename the temp file over ``target`` (True), or link it in under a new name (False)."""
    if target is not None:
        _still_there(parent, path, target)
        os.replace(tmp, path.name, src_dir_fd=parent, dst_dir_fd=parent)
        return True
    try:
        os.link(tmp, path.name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
    except FileExistsError:
        raise CallError(
            ErrorCode.CONFLICT, f"{path.text!r} was created by someone else meanwhile; read it again"
        ) from None
    return False
