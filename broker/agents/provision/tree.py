"""The digest of an installed tree: every path, its type, execute bit, size and content.

An install holds only folders and regular files Helm wrote; anything else found later (a
symlink, a FIFO, a file that cannot be read) is part of the digest as such, so it can never
match the receipt. Names are walked in byte order, so the digest does not depend on the
file system's listing order.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from broker.agents.provision.sri import Integrity

_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class TreeDigest:
    integrity: Integrity
    files: int
    bytes: int


def tree_digest(root: Path) -> TreeDigest:
    """Hash the tree under ``root`` (which must be a real folder)."""
    total = hashlib.sha512()
    counts = [0, 0]
    _walk(os.fsencode(root), b"", total, counts)
    return TreeDigest(Integrity(total.digest()), counts[0], counts[1])


def _walk(base: bytes, relative: bytes, total: hashlib._Hash, counts: list[int]) -> None:
    folder = os.path.join(base, relative) if relative else base
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        total.update(b"unreadable-folder\x00" + relative + b"\n")
        return
    for name in names:
        path = os.path.join(relative, name) if relative else name
        full = os.path.join(base, path)
        try:
            st = os.lstat(full)
        except OSError:
            total.update(b"vanished\x00" + path + b"\n")
            continue
        if stat.S_ISDIR(st.st_mode):
            total.update(b"d\x00" + path + b"\n")
            _walk(base, path, total, counts)
        elif stat.S_ISREG(st.st_mode):
            _file(full, path, st, total)
            counts[0] += 1
            counts[1] += st.st_size
        else:
            total.update(b"other\x00" + path + b"\n")


def _file(full: bytes, path: bytes, st: os.stat_result, total: hashlib._Hash) -> None:
    content = hashlib.sha512()
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        total.update(b"unreadable\x00" + path + b"\n")
        return
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            content.update(chunk)
    executable = b"x" if st.st_mode & 0o100 else b"-"
    total.update(b"f\x00" + path + b"\x00" + executable + b"\x00" + content.hexdigest().encode() + b"\n")
