"""The agent's file system, through the file guard every Helm caller uses.

This is the one module of ``broker.agents`` that touches the file guard
(``broker.fs.guard``). The guard places a path under a root by one lexical check, opens
every folder below the root relative to its parent without following links, refuses FIFOs,
devices, hard-linked files and Helm's home (by device and inode), and replaces files atomically.
Agents add one rule of their own: ACP paths are absolute, so a relative path is refused rather
than taken as relative to the first root.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from broker.errors import CallError, ErrorCode
from broker.fs.guard import FileGuard, GuardRoot, Root
from broker.fs.guard import locate as guard_locate
from broker.fs.reading import MAX_FILE_BYTES
from broker.fs.safe import RelPath, open_parent, refused

__all__ = [
    "MAX_FILE_BYTES", "Current", "RelPath", "Root", "create_file", "current_text", "inside", "locate",
    "read_text", "refused", "write_file",
]  # fmt: skip


@dataclass(frozen=True)
class Current:
    """A file's text as it is now, and the sha256 a replacement must still match."""

    text: str
    sha256: str


def locate(path: object, roots: Sequence[Root]) -> tuple[Root, RelPath]:
    """The root that holds the absolute ``path`` and the path below it (no I/O).

    The guard's one "is inside" check: the longest root the path starts with, and a clean
    relative path after it (no ``..``, ``.`` or empty segments).
    """
    if not isinstance(path, str) or not path.startswith("/"):
        raise refused("the path must be absolute (ACP paths are absolute)")
    where = guard_locate([r.folder for r in roots], path)
    return roots[where.root], where.path


def inside(path: str, roots: Sequence[Root]) -> bool:
    try:
        locate(path, roots)
    except CallError:
        return False
    return True


def _guard(root: Root, home: Path) -> FileGuard:
    return FileGuard([GuardRoot(root.folder, f"the {root.label.lower()} {root.name!r}")], home)


def read_text(root: Root, rel: RelPath, home: Path) -> str:
    """The UTF-8 text of one regular file of at most 256 KiB (blocking; run in a thread)."""
    return _guard(root, home).read_text(rel.text).text


def _missing(guard: FileGuard, rel: RelPath) -> bool:
    with guard.opened() as opened:
        parent = open_parent(opened, rel)
        try:
            os.stat(rel.name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return True
        finally:
            os.close(parent)
    return False


def current_text(root: Root, rel: RelPath, home: Path) -> Current | None:
    """What a write would replace, or None when the file does not exist yet (blocking)."""
    guard = _guard(root, home)
    if _missing(guard, rel):
        return None
    got = guard.read_text(rel.text)
    return Current(got.text, got.sha256)


def write_file(root: Root, rel: RelPath, data: bytes, expected_sha256: str, home: Path) -> None:
    """Replace an existing file atomically if it still has ``expected_sha256`` (blocking)."""
    _guard(root, home).write_text(rel.text, data.decode("utf-8"), expected_sha256)


def create_file(root: Root, rel: RelPath, data: bytes, home: Path) -> None:
    """Create a new file atomically; ``conflict`` if the name exists by then (blocking).

    The guard's ``create`` replaces a file that appeared meanwhile; the check just before it
    narrows that to the moment of the write (the user confirmed a new file, not a replacement).
    """
    guard = _guard(root, home)
    if not _missing(guard, rel):
        raise CallError(ErrorCode.CONFLICT, f"{rel.text!r} appeared since the change was shown")
    guard.write_text(rel.text, data.decode("utf-8"), None, create=True)
