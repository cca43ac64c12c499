"""Past agent sessions: ``<home>/agent-sessions.json``, so a session can be loaded again.

Format (version 1)::

    {"version": 1, "sessions": [{"id": ID, "agent": NAME, "workspace": NAME,
                                 "projects": [ID, ...], "started_at": ISO, "title": TEXT}]}

Newest first, at most ``KEEP`` entries. ``title`` is the first line of the first prompt (cut to
80 characters), so a list of past sessions means something to the user. Written atomically
under a lock; an unreadable file is reported and left as it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import SettingsError
from broker.jsonutil import DuplicateKeyError, loads_strict

VERSION = 1
KEEP = 200
FILE = "agent-sessions.json"


@dataclass(frozen=True)
class PastSession:
    id: str
    agent: str
    workspace: str
    projects: tuple[str, ...]
    started_at: str
    title: str

    @classmethod
    def now(cls, id: str, agent: str, workspace: str, projects: tuple[str, ...], prompt: str) -> PastSession:
        first = next(iter(prompt.strip().splitlines()), "")
        started = datetime.now(UTC).isoformat(timespec="seconds")
        return cls(id, agent, workspace, projects, started, first[:80])


def _read(path: Path) -> list[PastSession]:
    try:
        raw: Any = loads_strict(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, ValueError, DuplicateKeyError) as exc:
        raise SettingsError(f"{path} cannot be read ({type(exc).__name__}); it was left as it is") from exc
    if (
        not isinstance(raw, dict)
        or raw.get("version") != VERSION
        or not isinstance(raw.get("sessions"), list)
    ):
        raise SettingsError(f"{path} is not a version {VERSION} session list; it was left as it is")
    try:
        return [
            PastSession(str(s["id"]), str(s["agent"]), str(s["workspace"]), tuple(map(str, s["projects"])),
                        str(s["started_at"]), str(s.get("title", "")))
            for s in raw["sessions"]
        ]  # fmt: skip
    except (KeyError, TypeError) as exc:
        raise SettingsError(f"{path} is malformed; it was left as it is") from exc


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[list[PastSession]]:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(home / ".agent-sessions.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        sessions = _read(home / FILE)
        yield sessions
        data = {"version": VERSION, "sessions": [asdict(s) for s in sessions[:KEEP]]}
        write_atomic(home / FILE, (json.dumps(data, indent=2) + "\n").encode(), mode=0o600)


def past_sessions(home: Path) -> list[PastSession]:
    """Every remembered session, newest first."""
    return _read(home / FILE)


def remember(home: Path, session: PastSession) -> None:
    with _locked(home) as sessions:
        sessions[:] = [session, *(s for s in sessions if s.id != session.id)]


def forget(home: Path, session_id: str) -> None:
    with _locked(home) as sessions:
        sessions[:] = [s for s in sessions if s.id != session_id]


def find(home: Path, session_id: str) -> PastSession | None:
    return next((s for s in past_sessions(home) if s.id == session_id), None)
