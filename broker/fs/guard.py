"""The file guard: text files under declared roots, opened race-free and replaced atomically.

This is the one way Helm touches a user's files for someone else. The ``files`` kind uses it for
extensions, and it is the API for any other caller (such as an agent's ``fs/read_text_file`` and
``fs/write_text_file``). It has no Qt and no event loop: call it from a worker thread.

    guard = FileGuard([GuardRoot(workspace_root, "the workspace root")], home=helm_home)
    got = guard.read_text("/path/of/the/workspace/notes/a.md")  # or "notes/a.md"
    got.text, got.sha256
    new_sha = guard.write_text("notes/a.md", got.text + "more\n", expected_sha256=got.sha256)

Where a path leads (``locate``, the one "is inside" check): an absolute path belongs to the
longest root it starts with, compared as text (never resolved); a relative path is relative to
the first root. What remains must be a plain relative path: no ``.`` or ``..`` segments, no empty
segments, no backslash or NUL, names of at most 255 bytes. A path under no root is refused.

What the guard refuses, whatever the path looks like (``CallError`` ``refused``):

* a symlink anywhere: the file itself or any folder above it, even one pointing back inside;
* folders, FIFOs, devices and sockets (a FIFO cannot hang the call: it is opened non-blocking);
* a file with more than one hard link, for reading and for writing;
* Helm's home folder and everything below it, by device and inode (a root that contains the
  home, a symlinked root, a bind mount); a root that is the home is refused as a whole;
* for writes, a read-only file (its owner has no write bit), whoever runs Helm.

Every folder is opened relative to its parent's descriptor without following links and checked
after opening, so a symlink swapped in at any moment is never followed. Files are at most 256 KiB
(``too_large``) and UTF-8. A write replaces the file atomically (readers see the old or the new
bytes, never a mix), keeps its permission bits, compares ``expected_sha256`` under a lock
(``conflict`` if it differs) and with ``create`` may make a missing file. Messages name the path
relative to its root, never the root folder on disk. Confirming a write is the caller's job.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from broker.errors import CallError, ErrorCode
from broker.fs.ledger import TempLedger
from broker.fs.reading import MAX_FILE_BYTES, FileText, read_text
from broker.fs.safe import (
    FileId,
    OpenRoot,
    RelPath,
    file_id,
    home_id,
    open_root,
    parse_path,
    refused,
)
from broker.fs.writing import replace_file

SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_DEPTH_ABOVE = 256
"""How many folders above a folder ``folder_holds`` looks at (deeper trees do not exist)."""

__all__ = [
    "FileGuard",
    "FileText",
    "GuardRoot",
    "Located",
    "Root",
    "checked_sha256",
    "encode_text",
    "folder_holds",
    "locate",
]


@dataclass(frozen=True)
class GuardRoot:
    """A folder the guard gives access to, and how messages name it (never by its path)."""

    folder: Path
    label: str = "the root"


@dataclass(frozen=True)
class Root:
    """Where a caller's paths start: the workspace root or a registered project."""

    label: str  # "Workspace" or "Project"
    name: str
    folder: Path

    @property
    def what(self) -> str:
        return "the workspace root" if self.label == "Workspace" else f"the project {self.name!r}"


@dataclass(frozen=True)
class Located:
    """Where a path leads: the index of its root and the path relative to that root."""

    root: int
    path: RelPath


def locate(roots: Sequence[Path], path: object) -> Located:
    """The canonical "is inside" check (no I/O; see the module docstring)."""
    if not isinstance(path, str) or not path.startswith("/"):
        return Located(0, parse_path(path))
    best, best_prefix = -1, ""
    for i, root in enumerate(roots):
        prefix = str(root).rstrip("/") + "/"
        if path.startswith(prefix) and len(prefix) > len(best_prefix):
            best, best_prefix = i, prefix
    if best < 0:
        shown = path if len(path) <= 200 else path[:200] + "…"
        raise refused(f"{shown!r} is outside the folders Helm gives access to")
    return Located(best, parse_path(path[len(best_prefix) :]))


def encode_text(text: object) -> bytes:
    """The UTF-8 of a new file content of at most 256 KiB, or a clear refusal."""
    if not isinstance(text, str):
        raise refused("text must be a string: the full new content of the file")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise refused("text is not valid Unicode (it has an unpaired surrogate)") from None
    if len(data) > MAX_FILE_BYTES:
        raise CallError(ErrorCode.TOO_LARGE, "text is larger than 256 KiB")
    return data


def checked_sha256(value: object) -> str:
    """A 64-hex sha256 in lower case (upper case is accepted), or a clear refusal."""
    if not isinstance(value, str) or not SHA256.fullmatch(value.lower()):
        raise refused("expected_sha256 must be the 64-hex sha256 that read returned")
    return value.lower()


class FileGuard:
    """Reads and writes under ``roots``, fencing off Helm's ``home`` (see the module docstring)."""

    def __init__(self, roots: Sequence[GuardRoot], home: Path) -> None:
        if not roots:
            raise ValueError("a file guard needs at least one root")
        # Absolute and normalized, so that ``locate`` compares like with like.
        self.roots = tuple(GuardRoot(Path(os.path.abspath(r.folder)), r.label) for r in roots)
        self.home = home
        self.ledger = TempLedger(home)

    def locate(self, path: object) -> Located:
        return locate([r.folder for r in self.roots], path)

    @contextlib.contextmanager
    def opened(self, root: int = 0) -> Iterator[OpenRoot]:
        """The root folder opened once, fenced from the home; an OSError inside is ``unavailable``."""
        spec = self.roots[root]
        opened = open_root(spec.folder, spec.label, home_id(self.home))
        try:
            yield opened
        except OSError as exc:
            # Anything the safe openers did not turn into a refusal: a disk or permission error.
            raise CallError(ErrorCode.UNAVAILABLE, "Helm could not access the file (an I/O error)") from exc
        finally:
            os.close(opened.fd)

    def read_text(self, path: object) -> FileText:
        """The UTF-8 text of a regular file of at most 256 KiB, with the sha256 of its bytes."""
        where = self.locate(path)
        with self.opened(where.root) as root:
            return read_text(root, where.path)

    def write_text(
        self, path: object, text: str, expected_sha256: str | None = None, *, create: bool = False
    ) -> str:
        """Replace (or, with ``create``, make) the file atomically; return the new sha256."""
        where = self.locate(path)
        data = encode_text(text)
        expected = None if expected_sha256 is None else checked_sha256(expected_sha256)
        with self.opened(where.root) as root:
            return replace_file(root, where.path, data, expected, self.ledger, create=create)


def _ancestor_ids(fd: int) -> list[FileId]:
    """The folder ``fd`` and every folder above it, up to ``/`` (by ``..``, as the kernel sees it)."""
    ids = [file_id(os.fstat(fd))]
    for depth in range(1, MAX_DEPTH_ABOVE):
        try:
            here = file_id(os.stat("/".join([".."] * depth), dir_fd=fd))
        except OSError:
            break  # an ancestor we may not search: what is above it is not looked at
        if here == ids[-1]:
            break  # ".." of "/" is "/"
        ids.append(here)
    return ids


def folder_holds(folder: Path, inner: Path) -> bool:
    """Whether ``inner`` is ``folder`` or lies below it, by device and inode (links followed)."""
    try:
        target = file_id(os.stat(folder))
        fd = os.open(inner, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        return target in _ancestor_ids(fd)
    finally:
        os.close(fd)
