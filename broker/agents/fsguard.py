"""The agent's file system: ``fs/read_text_file`` and ``fs/write_text_file`` inside the roots.

This is the one module of ``broker.agents`` that uses the files kind's guard
(``broker.kinds.files``): a path is placed under a root by one lexical check (``locate``), then
every folder below the root is opened relative to its parent without following links, and the
file itself with ``O_NOFOLLOW | O_NONBLOCK`` and verified with ``fstat`` — the same race-free
opens the files kind uses. On top of them, agents get three refusals of their own: the Helm
home (compared by device and inode, so no alias reaches it), a file with more than one hard
link (its other name may be outside the roots), and a root that is the Helm home or inside it.

Writes replace an existing file with the files kind's atomic replacement (temp file, fsync,
rename, and a conflict if the file changed since the diff was shown), or create a new file
atomically (temp file, fsync, hard link to the new name, which fails if the name appeared).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from broker.errors import CallError, ErrorCode
from broker.kinds.files.adapter import Root
from broker.kinds.files.reading import MAX_FILE_BYTES, decode, too_large
from broker.kinds.files.safe import (
    RelPath,
    open_folder_at,
    open_leaf,
    open_root,
    parse_path,
    read_upto,
    refused,
)
from broker.kinds.files.writing import replace_file

__all__ = [
    "MAX_FILE_BYTES",
    "Current",
    "Root",
    "create_file",
    "current_text",
    "locate",
    "read_text",
    "write_file",
]


@dataclass(frozen=True)
class Current:
    """A file's text as it is now, and the sha256 a replacement must still match."""

    text: str
    sha256: str


def locate(path: object, roots: Sequence[Root]) -> tuple[Root, RelPath]:
    """The root that holds the absolute ``path`` and the path below it (no I/O).

    The one "is inside" check of agents: the path must be absolute and start with a root's
    folder; what follows must be a clean relative path (no ``..``, ``.`` or empty segments).
    The deepest root wins, so a project inside the workspace is its own root.
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise refused("the path must be absolute (ACP paths are absolute)")
    for root in sorted(roots, key=lambda r: len(str(r.folder)), reverse=True):
        prefix = str(root.folder).rstrip("/") + "/"
        if path.startswith(prefix):
            return root, parse_path(path[len(prefix) :])
    shown = path if len(path) <= 200 else path[:200] + "…"
    raise refused(f"{shown!r} is outside the folders this agent may use")


def inside(path: str, roots: Sequence[Root]) -> bool:
    try:
        locate(path, roots)
    except CallError:
        return False
    return True


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _open_guarded_parent(root: Root, rel: RelPath, home: Path) -> int:
    """Open the folder holding ``rel`` under ``root``, refusing the Helm home on the way."""
    home_id = _identity(home)
    real = Path(os.path.realpath(root.folder))
    if real == Path(os.path.realpath(home)) or Path(os.path.realpath(home)) in real.parents:
        raise refused(f"{root.label.lower()} {root.name!r} is inside Helm's home folder")
    fd = open_root(root.folder, f"{root.label.lower()} {root.name!r}")
    walked: list[str] = []
    try:
        for name in rel.folders:
            walked.append(name)
            try:
                child = open_folder_at(fd, name)
            except OSError as exc:
                raise refused(f"{'/'.join(walked)!r} is not a folder Helm can open (a symlink?)") from exc
            os.close(fd)
            fd = child
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == home_id:
                raise refused(f"{'/'.join(walked)!r} is Helm's home folder")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _leaf(rel: RelPath) -> RelPath:
    return RelPath(rel.name, (rel.name,))


def _in_parent[T](root: Root, rel: RelPath, home: Path, work: Callable[[int], T]) -> T:
    parent = _open_guarded_parent(root, rel, home)
    try:
        return work(parent)
    except OSError as exc:
        raise CallError(ErrorCode.UNAVAILABLE, "Helm could not access the file (an I/O error)") from exc
    finally:
        os.close(parent)


def _read(parent: int, rel: RelPath) -> bytes:
    fd, st = open_leaf(parent, _leaf(rel))
    try:
        if st.st_nlink != 1:
            raise refused(f"{rel.text!r} has more than one hard link; Helm does not serve it")
        if st.st_size > MAX_FILE_BYTES:
            raise too_large(rel)
        data = read_upto(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise too_large(rel)
    return data


def read_text(root: Root, rel: RelPath, home: Path) -> str:
    """The UTF-8 text of one regular file of at most 256 KiB (blocking; run in a thread)."""
    return decode(rel, _in_parent(root, rel, home, lambda parent: _read(parent, rel)))


def current_text(root: Root, rel: RelPath, home: Path) -> Current | None:
    """What a write would replace, or None when the file does not exist yet (blocking)."""

    def work(parent: int) -> Current | None:
        try:
            os.stat(rel.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None
        data = _read(parent, rel)
        return Current(decode(rel, data), hashlib.sha256(data).hexdigest())

    return _in_parent(root, rel, home, work)


def write_file(root: Root, rel: RelPath, data: bytes, expected_sha256: str, home: Path) -> None:
    """Replace an existing file atomically if it still has ``expected_sha256`` (blocking)."""
    _in_parent(root, rel, home, lambda parent: replace_file(parent, _leaf(rel), data, expected_sha256))


def create_file(root: Root, rel: RelPath, data: bytes, home: Path) -> None:
    """Create a new file atomically; ``conflict`` if the name exists by then (blocking)."""
    _in_parent(root, rel, home, lambda parent: _create(parent, rel, data))


def _create(parent: int, rel: RelPath, data: bytes) -> None:
    # The temp name is the files kind's, so its cleaner removes what a crash leaves behind;
    # the flock tells that cleaner the file is still being written.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    tmp = f".helm-write-{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, flags, 0o600, dir_fd=parent)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
        os.fsync(fd)
        try:
            os.link(tmp, rel.name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
        except FileExistsError:
            raise CallError(
                ErrorCode.CONFLICT, f"{rel.text!r} appeared during the write; read it again"
            ) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        os.close(fd)
    with contextlib.suppress(OSError):
        os.fsync(parent)
