"""The TDT previews Helm has shown, kept in the home so an apply anywhere finds its preview.

A hash-bound TDT write (``tdt_brain_names_apply``, ``tdt_candidate_review``…) is sent only with
a hash that a preview returned through Helm to the same extension in the same workspace; its
confirmation dialog shows that preview. The preview may have come through another Helm process
(``helm call … tdt_brain_names_preview``, then ``helm call … tdt_brain_names_apply``), so Helm
keeps what it saw in its home, one file per (workspace, extension) in ``HOME/tdt-previews/``::

    {"version": 1, "workspace": "main", "extension": "com.example.review",
     "previews": [{"hash": "<sha256>", "tool": "tdt_brain_names_preview", "subject": null,
                   "text": "<what the dialog shows>", "at": <unix time>}, ...]}

Bounded: the newest ``MAX_PREVIEWS`` per file, each text at most ``MAX_TEXT`` characters (a
longer one is cut and says so), each file at most ``MAX_FILE_BYTES``. Expiring: a preview older
than ``TTL_SECONDS`` is forgotten (TDT itself refuses an apply whose preview went stale; this
only bounds what Helm keeps). Owner-only: the folder is 0700, every file 0600, written
atomically (``broker.atomic``) under an ``flock`` on the folder's lock file, so two Helm
processes never lose each other's previews. A file that cannot be read is treated as empty
and replaced at the next preview: it holds nothing but copies of what TDT can show again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import HomeWriteError
from broker.jsonutil import DuplicateKeyError, loads_strict

VERSION = 1
FOLDER = "tdt-previews"
MAX_PREVIEWS = 32
MAX_TEXT = 64 * 1024
MAX_FILE_BYTES = 1024 * 1024
TTL_SECONDS = 3600.0
CUT_NOTE = "\n… (preview cut here; the full preview is larger)"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Preview:
    """One preview Helm showed: the hash TDT bound to it, the tool that made it, what it is
    about (a candidate's id; None for a proposal), the text a dialog shows, and when."""

    hash: str
    tool: str
    subject: str | None
    text: str
    at: float


def shown_text(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + CUT_NOTE


class PreviewBook:
    """The previews of one Helm home."""

    def __init__(self, home: Path, *, clock: Any = time.time) -> None:
        self.folder = home / FOLDER
        self._clock = clock

    def path(self, workspace: str, extension: str) -> Path:
        digest = hashlib.sha256(f"{workspace}\x00{extension}".encode()).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def remember(self, workspace: str, extension: str, preview: Preview) -> None:
        """Keep ``preview`` (the newest first); raises ``HomeWriteError`` if the home refuses."""
        file = self.path(workspace, extension)
        try:
            self._remember(file, workspace, extension, preview)
        except HomeWriteError:
            raise
        except OSError as exc:  # the folder or its lock could not be made
            raise HomeWriteError(file, exc, "no preview was kept") from exc

    def _remember(self, file: Path, workspace: str, extension: str, preview: Preview) -> None:
        with self._locked():
            kept = [p for p in self._read(file) if p.hash != preview.hash]
            kept = [preview, *kept][:MAX_PREVIEWS]
            while True:
                data = _encode(workspace, extension, kept)
                if len(data) <= MAX_FILE_BYTES or len(kept) == 1:
                    break
                kept.pop()  # the oldest goes first
            write_atomic(file, data, mode=0o600)

    def find(self, workspace: str, extension: str, digest: str) -> Preview | None:
        """The unexpired preview with hash ``digest``, or None."""
        for preview in self._read(self.path(workspace, extension)):
            if preview.hash == digest:
                return preview
        return None

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT | _CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self, file: Path) -> list[Preview]:
        try:
            with open(file, "rb") as f:
                raw = f.read(MAX_FILE_BYTES + 1)
        except OSError:
            return []
        try:
            value = loads_strict(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, DuplicateKeyError, RecursionError):
            return []
        if not isinstance(value, dict) or value.get("version") != VERSION:
            return []
        oldest = self._clock() - TTL_SECONDS
        return [p for p in map(_preview, value.get("previews") or []) if p is not None and p.at >= oldest]


def _encode(workspace: str, extension: str, previews: list[Preview]) -> bytes:
    document = {
        "version": VERSION,
        "workspace": workspace,
        "extension": extension,
        "previews": [asdict(p) for p in previews],
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _preview(raw: Any) -> Preview | None:
    """A stored preview, or None for an entry that is not one (never trusted beyond its shape)."""
    if not isinstance(raw, dict):
        return None
    digest, tool, subject, text, at = (raw.get(k) for k in ("hash", "tool", "subject", "text", "at"))
    if not (isinstance(digest, str) and isinstance(tool, str) and isinstance(text, str)):
        return None
    if subject is not None and not isinstance(subject, str):
        return None
    if not isinstance(at, (int, float)) or isinstance(at, bool):
        return None
    return Preview(digest, tool, subject, text, float(at))
