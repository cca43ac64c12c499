"""Relative paths from extensions, and opening them without ever leaving the root.

Nothing here checks a path and then opens it by name. The root is opened once as a folder
descriptor; every folder below it is opened relative to its parent's descriptor with
``O_NOFOLLOW | O_DIRECTORY``, and the file itself with ``O_NOFOLLOW | O_NONBLOCK``; then the
opened descriptor is verified with ``fstat``. A symlink swapped in at any moment makes the
kernel's open fail, so a race cannot lead outside the root. ``O_NONBLOCK`` keeps a FIFO from
hanging the open; FIFOs, devices, sockets and folders are refused after the ``fstat``, and so
is a file with more than one hard link (another name of it may be anywhere on the disk).

Helm's own home folder is fenced off by identity, not by name: the root and every folder a walk
opens are compared (device, inode) with the home, so neither a root that contains the home, nor
a symlinked root, nor a bind mount of the home leads into it. (A root inside the home, such as
the demo workspace, is fine: no walk goes up, so it reaches only its own subtree.)

Messages name the relative path the extension gave, never the root folder on disk.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from broker.errors import CallError, ErrorCode

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255

FileId = tuple[int, int]
"""(st_dev, st_ino): what a file or folder is, whatever name reaches it."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
O_LEAF = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _CLOEXEC


@dataclass(frozen=True)
class RelPath:
    """A validated relative path: its text as given and its segments."""

    text: str
    segments: tuple[str, ...]

    @property
    def folders(self) -> tuple[str, ...]:
        return self.segments[:-1]

    @property
    def name(self) -> str:
        return self.segments[-1]


@dataclass(frozen=True)
class OpenRoot:
    """A root folder opened once, and the folder no walk from it may enter (Helm's home)."""

    fd: int
    fence: FileId | None


def refused(message: str) -> CallError:
    return CallError(ErrorCode.REFUSED, message)


def file_id(st: os.stat_result) -> FileId:
    return (st.st_dev, st.st_ino)


def home_id(home: Path) -> FileId | None:
    """The identity of Helm's home folder, or None while it does not exist (nothing to fence)."""
    try:
        return file_id(os.stat(home))
    except OSError:
        return None


def parse_path(value: object, what: str = "path") -> RelPath:
    """Validate a path argument (no I/O); raise ``refused`` saying what is wrong."""
    if not isinstance(value, str):
        raise refused(f"{what} must be a string")
    if not value or len(value) > MAX_PATH_CHARS:
        raise refused(f"{what} must be 1 to {MAX_PATH_CHARS} characters")
    shown = value if len(value) <= 200 else value[:200] + "…"
    if "\x00" in value:
        raise refused(f"{what} must not contain NUL")
    if "\\" in value:
        raise refused(f"{what} {shown!r} must use / as the separator, not backslashes")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise refused(f"{what} is not valid Unicode text") from None
    if value.startswith("/"):
        raise refused(f"{what} {shown!r} must be relative (no leading /)")
    segments = tuple(value.split("/"))
    for segment in segments:
        if segment == "":
            raise refused(f"{what} {shown!r} must not have empty segments (// or a trailing /)")
        if segment in (".", ".."):
            raise refused(f"{what} {shown!r} must not contain . or .. segments")
        if len(segment.encode("utf-8")) > MAX_NAME_BYTES:
            raise refused(f"{what} {shown!r} has a name longer than {MAX_NAME_BYTES} bytes")
    return RelPath(value, segments)


def open_root(folder: Path, what: str, fence: FileId | None) -> OpenRoot:
    """Open the root folder (the user configured it, so links in its own path are followed).

    ``fence`` is Helm's home (``home_id``): a root that is the home is refused. The caller closes
    ``fd``.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise CallError(ErrorCode.UNAVAILABLE, f"{what} folder is missing or cannot be opened") from exc
    if fence is not None and file_id(os.fstat(fd)) == fence:
        os.close(fd)
        raise refused(f"{what} is Helm's own folder; Helm gives no access to it")
    return OpenRoot(fd, fence)


def _why_not(parent: int, name: str) -> str:
    """Why opening ``name`` failed, for the message only (the refusal came from the open)."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return "does not exist"
    except OSError:
        return "cannot be opened"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink; Helm does not follow symlinks"
    if stat.S_ISDIR(st.st_mode):
        return "is a folder"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a FIFO, device or socket)"
    return "cannot be opened"


def open_folder_at(parent: int, name: str, fence: FileId | None) -> int | None:
    """Open a child folder without following a symlink; None if it is Helm's home.

    Raise OSError if it is not a folder (or a symlink to one).
    """
    fd = os.open(name, O_DIR, dir_fd=parent)
    if fence is not None and file_id(os.fstat(fd)) == fence:
        os.close(fd)
        return None
    return fd


def open_parent(root: OpenRoot, path: RelPath) -> int:
    """Open the folder that holds ``path``, component by component; the caller closes it."""
    fd = os.dup(root.fd)
    walked: list[str] = []
    try:
        for name in path.folders:
            walked.append(name)
            try:
                child = open_folder_at(fd, name, root.fence)
            except OSError as exc:
                raise refused(f"{'/'.join(walked)!r} {_why_not(fd, name)}") from exc
            if child is None:
                raise refused(f"{'/'.join(walked)!r} is Helm's own folder; Helm gives no access to it")
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_leaf(parent: int, path: RelPath) -> tuple[int, os.stat_result]:
    """Open the file ``path.name`` in ``parent`` for reading and verify it is a regular file."""
    name = path.name
    try:
        pre = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        raise refused(f"{path.text!r} does not exist") from None
    except OSError as exc:
        raise refused(f"{path.text!r} cannot be opened") from exc
    # Refuse before opening, so a device is never opened in the first place; the fstat below
    # is what makes it race-free.
    if not stat.S_ISREG(pre.st_mode):
        raise refused(f"{path.text!r} {_why_not(parent, name)}")
    try:
        fd = os.open(name, O_LEAF, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO, errno.ENOENT):
            raise refused(f"{path.text!r} {_why_not(parent, name)}") from exc
        raise refused(f"{path.text!r} cannot be opened") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise refused(f"{path.text!r} is not a regular file")
    if st.st_nlink > 1:
        os.close(fd)
        raise hard_linked(path)
    return fd, st


def hard_linked(path: RelPath) -> CallError:
    return refused(
        f"{path.text!r} has more than one hard link; Helm does not read or write such files "
        "(another name of it may be outside the folder)"
    )


def read_upto(fd: int, limit: int) -> bytes:
    """Read at most ``limit`` bytes from the start of ``fd``."""
    chunks: list[bytes] = []
    left = limit
    offset = 0
    while left > 0:
        chunk = os.pread(fd, min(left, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        left -= len(chunk)
    return b"".join(chunks)
