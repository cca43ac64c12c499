"""list: the regular files under the root that a declared glob matches.

The walk goes through folder descriptors (never by path), enters a folder only while a glob
can still match below it, opens literal names directly instead of listing their folder, and
visits children in an order that yields paths already sorted, so it stops as soon as it has
one more file than the limit. Helm's home folder is never entered and a file with more than one
hard link is never listed (``read`` refuses both); nor is a path ``read`` would refuse as a path
(``safe.parse_path``): longer than 4096 characters, or with a backslash in a name. Matching is
paid from the call's ``Budget``; the files of one folder are matched together, in one pass where
their globs allow it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.fs.ledger import TEMP_PREFIX
from broker.fs.safe import MAX_PATH_CHARS, FileId, OpenRoot, open_folder_at
from broker.kinds.files.globs import GlobSet, States
from broker.kinds.files.wildcard import Budget

MAX_LIST = 1000
MAX_DEPTH = 256

_FILE, _DIR, _OTHER = 0, 1, 2


@dataclass(frozen=True)
class _Walk:
    globs: GlobSet
    budget: Budget
    fence: FileId | None


def list_files(root: OpenRoot, globs: GlobSet, budget: Budget, limit: int = MAX_LIST) -> dict[str, Any]:
    """``{files: [{path, size}], truncated}``: the first ``limit`` matches in path order.

    ``truncated`` is true when more files matched than were returned.
    """
    files: list[dict[str, Any]] = []
    walker = _Walk(globs, budget, root.fence)
    with contextlib.closing(_walk(walker, root.fd, globs.start, "", 0)) as walk:
        for entry in walk:
            if len(files) == limit:
                return {"files": files, "truncated": True}
            files.append(entry)
    return {"files": files, "truncated": False}


def _kind(mode: int) -> int:
    return _FILE if stat.S_ISREG(mode) else _DIR if stat.S_ISDIR(mode) else _OTHER


def _printable(name: str) -> bool:
    # Names that are not valid UTF-8 on disk come back with surrogate escapes; JSON cannot
    # carry them, so such files are not listed (documented). A backslash: ``read`` refuses it.
    if "\\" in name:
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _children(folder: int, globs: GlobSet, states: States) -> tuple[list[str], list[str]]:
    """The names of the children worth looking at, a folder's followed by ``/``, sorted so
    paths come out in order (every path below ``a`` starts with ``a/``, so this order is the
    plain code-point order of the full paths); and the names of the files among them."""
    literal = globs.literal_names(states)
    found: list[str] = []
    files: list[str] = []
    if literal is not None:
        for name in literal:
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except OSError:
                continue
            kind = _kind(st.st_mode)
            if kind == _FILE:
                files.append(name)
            elif kind == _DIR:
                found.append(name + "/")
    else:
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    if entry.is_file(follow_symlinks=False):  # the common case first
                        files.append(entry.name)
                    elif entry.is_dir(follow_symlinks=False):
                        found.append(entry.name + "/")
        except OSError:
            return [], []  # a folder removed or made unreadable during the walk is skipped
    found += files
    found.sort()
    return found, files


def _walk(w: _Walk, folder: int, states: States, prefix: str, depth: int) -> Generator[dict[str, Any]]:
    if depth > MAX_DEPTH:
        raise CallError(ErrorCode.TOO_LARGE, f"the tree is deeper than {MAX_DEPTH} folders")
    globs, budget = w.globs, w.budget
    children, files = _children(folder, globs, states)
    matching = globs.file_filter(states)
    hits = set(matching(files, budget)) if matching is not None and files else ()
    room = MAX_PATH_CHARS - len(prefix)  # a longer path is one read would refuse
    for name in children:
        if len(name) > room:
            continue
        if name[-1] != "/":
            if name not in hits or name.startswith(TEMP_PREFIX) or not _printable(name):
                continue
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink == 1:
                yield {"path": prefix + name, "size": st.st_size}
            continue
        name = name[:-1]
        if globs.live(nxt := globs.step(states, name, budget)) and _printable(name):
            try:
                child = open_folder_at(folder, name, w.fence)
            except OSError:
                continue  # replaced by a symlink or removed since the listing: not followed
            if child is None:
                continue  # Helm's home
            try:
                yield from _walk(w, child, nxt, prefix + name + "/", depth + 1)
            finally:
                os.close(child)
