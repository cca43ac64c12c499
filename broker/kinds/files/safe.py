"""Relative paths from extensions, and opening them without ever leaving the root.

Nothing here checks a path and then opens it by name. The root is opened once as a folder
descriptor; every folder below it is opened relative to its parent's descriptor with
``O_NOFOLLOW | O_DIRECTORY``, and the file itself with ``O_NOFOLLOW | O_NONBLOCK``; then the
opened descriptor is verified with ``fstat``. A symlink swapped in at any moment makes the
kernel's open fail, so a race cannot lead outside the root. ``O_NONBLOCK`` keeps a FIFO from
hanging the open; FIFOs, devices, sockets and folders are refused after the ``fstat``.

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


def refused(message: str) -> CallError:
    return CallError(ErrorCode.REFUSED, message)


def file_id(st: os.stat_result) -> FileId:
    return (st.st_dev, st.st_ino)


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


def open_root(folder: Path, what: str) -> int:
    """Open the root folder (the user configured it, so links in its own path are followed)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise CallError(ErrorCode.UNAVAILABLE, f"{what} folder is missing or cannot be opened") from exc
    return fd


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


def open_folder_at(parent: int, name: str) -> int:
    """Open a child folder without following a symlink; raise OSError if it is not one."""
    return os.open(name, O_DIR, dir_fd=parent)


def open_parent(root: int, path: RelPath) -> int:
    """Open the folder that holds ``path``, component by component; the caller closes it."""
    fd = os.dup(root)
    walked: list[str] = []
    try:
        for name in path.folders:
            walked.append(name)
            try:
                child = open_folder_at(fd, name)
            except OSError as exc:
                raise refused(f"{'/'.join(walked)!r} {_why_not(fd, name)}") from exc
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
    return fd, st


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
