"""read: one file, or a batch of files, as UTF-8 text with its sha256."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.fs.safe import OpenRoot, RelPath, open_leaf, open_parent, read_upto, refused

MAX_FILE_BYTES = 256 * 1024
MAX_BATCH_BYTES = 2 * 1024 * 1024
MAX_BATCH_PATHS = 100


@dataclass(frozen=True)
class FileText:
    path: str
    text: str
    sha256: str
    size: int

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "text": self.text, "sha256": self.sha256}


def decode(path: RelPath, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refused(
            f"{path.text!r} is not UTF-8 text (invalid byte at offset {exc.start}); "
            "Helm reads text files only"
        ) from None


def too_large(path: RelPath) -> CallError:
    return CallError(ErrorCode.TOO_LARGE, f"{path.text!r} is larger than 256 KiB")


def read_bytes(root: OpenRoot, path: RelPath) -> bytes:
    """The bytes of one regular file of at most 256 KiB, opened without following links."""
    parent = open_parent(root, path)
    try:
        fd, st = open_leaf(parent, path)
    finally:
        os.close(parent)
    try:
        if st.st_size > MAX_FILE_BYTES:
            raise too_large(path)
        # Read one byte more than allowed: the file may have grown since the fstat.
        data = read_upto(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise too_large(path)
    return data


def read_text(root: OpenRoot, path: RelPath) -> FileText:
    data = read_bytes(root, path)
    return FileText(path.text, decode(path, data), hashlib.sha256(data).hexdigest(), len(data))


def read_batch(root: OpenRoot, paths: Sequence[RelPath]) -> dict[str, Any]:
    """Read files in order until 2 MiB of text; a file that does not fit ends the batch.

    Each file's own problem (missing, symlink, too large, not UTF-8…) becomes its entry's
    ``error``; ``truncated`` says that the files after the budget ran out were not read.
    """
    files: list[dict[str, Any]] = []
    budget = MAX_BATCH_BYTES
    for path in paths:
        try:
            got = read_text(root, path)
        except CallError as err:
            files.append({"path": path.text, "error": {"code": err.code.value, "message": err.message}})
            continue
        if got.size > budget:
            return {"files": files, "truncated": True}
        budget -= got.size
        files.append(got.as_json())
    return {"files": files, "truncated": False}
