"""The kill switch: extensions and connections the user stopped, kept in ``<home>/stopped.json``.

A stop is the user's "not now, not any more" for one extension in one workspace, or for one of
its connections. While it holds, every call it covers is refused (``refused``, with a message
that says the user stopped it) and the calls that were running when the user pressed Stop are
cancelled (``broker.activity`` does that). A stop outlives a restart of Helm, until the user
turns the extension or connection back on. Format (version 1)::

    {"version": 1, "stopped": [{"workspace": "main", "extension": "com.example.board",
                                "connection": null | "gh", "since": "<UTC ISO time>",
                                "by": "catalogue", "reason": "…"}]}

``by`` and ``reason`` are there only for a stop Helm made itself rather than the user: a version
its catalogue withdrew is stopped with the catalogue's reason (``broker.catalogue``), and every
refusal names it. Approving an update of that extension lifts such a stop; a user's stop stays.

Written atomically (``broker.atomic``). A file Helm cannot read is reported and left as it is:
while it is unreadable, Helm does not know what the user stopped, so every call is refused
(with a message that says so) and no switch can be changed until the file is fixed or removed.
"""

from __future__ import annotations

import fcntl
import json
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from broker.atomic import write_atomic
from broker.errors import CallError, ErrorCode, SettingsError
from broker.jsonutil import DuplicateKeyError, loads_strict

VERSION = 1
FILE_NAME = "stopped.json"
RECHECK_SECONDS = 0.5
"""How often a call looks at the file for changes made by another Helm process (this
process's own changes count at once)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """One stop: an extension (``connection`` None) or one of its connections."""

    workspace: str
    extension: str
    connection: str | None = None
    since: str = ""
    by: str = "user"
    """Who stopped it: "user", or "catalogue" for a withdrawn version."""
    reason: str = ""
    """Why, when Helm stopped it (the catalogue's words); empty for the user's own stop."""

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.workspace, self.extension, self.connection)

    def covers(self, workspace: str, extension: str, connection: str) -> bool:
        return (
            self.workspace == workspace
            and self.extension == extension
            and self.connection in (None, connection)
        )


def stopped_message(stop: Stop, *, running: bool = False) -> str:
    """What a refused (or cancelled) call says: the user stopped it, and how it comes back."""
    what = (
        stop.extension if stop.connection is None else f"connection {stop.connection!r} of {stop.extension}"
    )
    if stop.reason:
        done = "Helm cancelled this call" if running else "nothing was sent"
        return f"Helm stopped {what}: {stop.reason}; {done}"
    if running:
        return (
            f"the user stopped {what} in Helm while this call was running; Helm cancelled it "
            "(it may not have completed)"
        )
    return (
        f"the user stopped {what} in Helm; nothing was sent. It stays stopped until they turn "
        "it back on in Helm's extension list"
    )


class KillSwitch:
    """The stops of one Helm home, re-read when the file changes (another Helm process)."""

    def __init__(self, home: Path) -> None:
        self.path = home / FILE_NAME
        self._stops: dict[tuple[str, str, str | None], Stop] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._broken: str | None = None
        self._looked = -RECHECK_SECONDS

    # -- reading -------------------------------------------------------------------------
    def stops(self) -> list[Stop]:
        """Every stop in force (raises SettingsError when the file cannot be read)."""
        self._refresh(now=True)
        if self._broken is not None:
            raise SettingsError(self._broken)
        return list(self._stops.values())

    def is_stopped(self, workspace: str, extension: str, connection: str | None = None) -> bool:
        """Whether exactly this extension (or this connection of it) is stopped."""
        self._refresh(now=True)
        return (workspace, extension, connection) in self._stops

    def refusal(self, workspace: str, extension: str, connection: str) -> CallError | None:
        """Why a call of ``extension`` through ``connection`` is refused now, if it is."""
        self._refresh()
        if self._broken is not None:
            return CallError(
                ErrorCode.REFUSED,
                "Helm cannot read which extensions the user stopped (stopped.json in Helm's home "
                "is damaged); no call is made until it is fixed or removed",
            )
        if not self._stops:
            return None
        stop = self._stops.get((workspace, extension, None)) or self._stops.get(
            (workspace, extension, connection)
        )
        return None if stop is None else CallError(ErrorCode.REFUSED, stopped_message(stop))

    def _refresh(self, *, now: bool = False) -> None:
        clock = time.monotonic()
        if not now and clock - self._looked < RECHECK_SECONDS:
            return
        self._looked = clock
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._stops, self._stamp, self._broken = {}, None, None
            return
        except OSError:
            st = None
        stamp = None if st is None else (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp is not None and stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._stops, self._broken = _read(self.path), None
        except SettingsError as err:
            self._stops, self._broken = {}, str(err)

    # -- changing ------------------------------------------------------------------------
    def set(
        self,
        workspace: str,
        extension: str,
        connection: str | None,
        stopped: bool,
        *,
        by: str = "user",
        reason: str = "",
    ) -> Stop:
        """Stop or turn back on; raises SettingsError (nothing written) when the file is damaged.
        ``by`` and ``reason`` say who stopped it and why, when it was not the user."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(self.path.parent / ".stopped.lock", "a") as lock:  # another Helm process
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return self._set(Stop(workspace, extension, connection, "", by, reason), stopped)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _set(self, asked: Stop, stopped: bool) -> Stop:
        self._stamp = None
        self._refresh(now=True)
        if self._broken is not None:
            raise SettingsError(self._broken)
        stop = replace(asked, since=datetime.now(UTC).isoformat(timespec="seconds"))
        stops = dict(self._stops)
        existing = stops.get(stop.key)
        if not stopped:
            stops.pop(stop.key, None)
        elif existing is None or (stop.reason and existing.reason != stop.reason):
            stops[stop.key] = stop  # Helm's own stop says why, even over the user's
        else:
            return existing
        rows = [
            _row(s)
            for s in sorted(stops.values(), key=lambda s: (s.workspace, s.extension, s.connection or ""))
        ]
        data = json.dumps({"version": VERSION, "stopped": rows}, indent=2, ensure_ascii=False) + "\n"
        write_atomic(self.path, data.encode("utf-8"), mode=0o600)
        self._stops, self._stamp = stops, None
        return stops.get(stop.key, stop)


def _row(stop: Stop) -> dict[str, Any]:
    row: dict[str, Any] = {"workspace": stop.workspace, "extension": stop.extension}
    row |= {"connection": stop.connection, "since": stop.since}
    if stop.by != "user" or stop.reason:
        row |= {"by": stop.by, "reason": stop.reason}
    return row


def _read(path: Path) -> dict[tuple[str, str, str | None], Stop]:
    broken = f"{path} cannot be read; it was left as it is — fix or remove it"
    try:
        raw: Any = loads_strict(path.read_bytes())
    except (OSError, ValueError, DuplicateKeyError, RecursionError) as exc:
        raise SettingsError(broken) from exc
    if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("stopped"), list):
        raise SettingsError(broken)
    stops = {}
    for row in raw["stopped"]:
        if not isinstance(row, dict):
            raise SettingsError(broken)
        workspace, extension, connection = row.get("workspace"), row.get("extension"), row.get("connection")
        if not (isinstance(workspace, str) and isinstance(extension, str)):
            raise SettingsError(broken)
        if connection is not None and not isinstance(connection, str):
            raise SettingsError(broken)
        by, reason = row.get("by", "user"), row.get("reason", "")
        if not (isinstance(by, str) and isinstance(reason, str)):
            raise SettingsError(broken)
        stop = Stop(workspace, extension, connection, str(row.get("since", "")), by, reason)
        stops[stop.key] = stop
    return stops
