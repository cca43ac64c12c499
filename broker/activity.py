"""What each extension did: one record per call, in memory and in a capped log in the home.

The broker watches every call it is given — reads, writes, refusals, from frames, apps and the
command line — through one hook: ``Activity.begin`` when the call arrives, ``Activity.end``
when it is over. A record holds the time, who called (workspace, extension, the calling
instance, and the requester's role: ``broker.context``), the connection and operation, how long
it took, its outcome (``ok``, the contract error code, or ``cancelled``) and the size of the
envelope it returned. Argument values and
results are never kept.

* In memory: the last ``KEEP`` records, and per extension the calls and failures since Helm
  started; listeners (the Activity view, the dashboard's error strips) hear each record.
* On disk: ``<home>/activity.jsonl``, one JSON object per line, mode 0600, written in batches
  (at most ``FLUSH_SECONDS`` after the call, and when the broker closes). When it would grow
  past ``MAX_FILE_BYTES`` it becomes ``activity.1.jsonl`` (replacing the previous one), so the
  log never takes more than twice that. Each batch is written whole under a lock (a failure
  cuts the log back; a torn tail left by a killed process is moved to ``activity.jsonl.torn``
  at the next batch); it is not fsynced — the log is Helm's notebook, and a power loss may lose
  the last batches.

The kill switch (``broker.killswitch``) works through the same hook: ``begin`` hands the call a
refusal while its extension or connection is stopped, and ``stop`` cancels the calls of a
stopped extension or connection that are running; the broker answers them with that refusal.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from broker import jsonl
from broker.context import CallContext
from broker.errors import CallError, ErrorCode
from broker.jsonutil import compact_utf8
from broker.killswitch import KillSwitch, Stop, stopped_message

log = logging.getLogger("helm.activity")

FILE_NAME = "activity.jsonl"
OLDER_FILE_NAME = "activity.1.jsonl"
KEEP = 2000
MAX_FILE_BYTES = 1024 * 1024
FLUSH_SECONDS = 1.0
FLUSH_RECORDS = 256
OK = "ok"
CANCELLED = "cancelled"

Listener = Callable[["ActivityRecord"], None]


class ActivityRecord(NamedTuple):
    """One finished call. ``time`` is when it arrived (seconds since the epoch).

    A named tuple: one is made for every call, so it must cost the call nothing to speak of.
    """

    time: float
    workspace: str
    extension: str
    instance: str
    connection: str
    operation: str
    duration_ms: float
    outcome: str
    bytes: int
    message: str = ""
    """Helm's message for a failed call, for the screen only: it can name an argument (a
    path), so it is never written to the log on disk."""
    requester: str = "extension"
    """Who called: ``extension``, ``app``, ``agent`` or ``helm`` (``broker.context``)."""
    detail: str = ""
    """What only the user sees of a failure (``CallError.detail``: a server's last stderr lines,
    its secrets removed), for the screen only like ``message``: never in the log on disk, never
    in an envelope."""

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    def line(self) -> str:
        """The record as one line of the log: a JSON object, without the message."""
        q = _quoted
        return (
            f'{{"time":"{_iso(self.time)}","workspace":{q(self.workspace)},"extension":{q(self.extension)},'
            f'"instance":{q(self.instance)},"connection":{q(self.connection)},'
            f'"operation":{q(self.operation)},"duration_ms":{self.duration_ms:.3f},'
            f'"outcome":{q(self.outcome)},"bytes":{self.bytes},"requester":{q(self.requester)}}}\n'
        )

    @classmethod
    def from_json(cls, raw: Any) -> ActivityRecord | None:
        """The record of one log line, or None for a line that is not one (a torn last line)."""
        if not isinstance(raw, dict):
            return None
        try:
            when = datetime.fromisoformat(str(raw["time"])).timestamp()
            ws, ext, instance, conn, op = (
                str(raw[k]) for k in ("workspace", "extension", "instance", "connection", "operation")
            )
            return cls(when, ws, ext, instance, conn, op, float(raw["duration_ms"]), str(raw["outcome"]),
                       int(raw["bytes"]), "", str(raw.get("requester", "extension")))  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None


class Count:
    """Calls of one extension since Helm started, and how many of them did not succeed."""

    __slots__ = ("calls", "failed")

    def __init__(self) -> None:
        self.calls = self.failed = 0


class Watch:
    """One call while it runs: what ``end`` needs, and whether the kill switch cancelled it."""

    __slots__ = (
        "connection", "ctx", "detail", "operation", "refusal", "started", "stopped_by", "task", "time"
    )  # fmt: skip

    def __init__(
        self, ctx: CallContext, connection: str, operation: str, task: asyncio.Task[Any] | None,
        refusal: CallError | None = None,
    ) -> None:  # fmt: skip
        self.ctx, self.connection, self.operation, self.task = ctx, connection, operation, task
        self.time, self.started = time.time(), time.perf_counter()
        self.refusal = refusal
        self.stopped_by: Stop | CallError | None = None
        """The user's stop, or the refusal of the organisation's policy, that cancelled it."""
        self.detail = ""
        """The failure's ``CallError.detail``, when it had one (the broker sets it)."""

    def cancelled_by_stop(self) -> CallError | None:
        """When the kill switch cancelled this call: the refusal to answer with (the
        cancellation it asked for is taken back, so the caller's task goes on)."""
        if self.stopped_by is None or self.task is None:
            return None
        if self.task.uncancel() > 0:
            return None  # someone else cancelled it too (the frame is closing): let it end
        if isinstance(self.stopped_by, CallError):
            return self.stopped_by
        return CallError(ErrorCode.REFUSED, stopped_message(self.stopped_by, running=True))


@dataclass
class _LogFile:
    """The capped log on disk: records wait in ``pending`` and are appended in batches."""

    path: Path
    max_bytes: int
    pending: list[ActivityRecord] = field(default_factory=list)
    timer: asyncio.TimerHandle | None = None
    written: int = 0
    """Records this process wrote (they are also in memory)."""

    def add(self, record: ActivityRecord) -> None:
        self.pending.append(record)
        if len(self.pending) >= FLUSH_RECORDS:
            self.flush()
        elif self.timer is None:
            try:
                self.timer = asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush)
            except RuntimeError:  # no loop (a script): write now
                self.flush()

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        pending, self.pending = self.pending, []
        if not pending:
            return
        data = "".join(r.line() for r in pending).encode("utf-8", "replace")
        try:
            self._append(data)
            self.written += len(pending)
        except OSError as exc:  # the log is Helm's own notebook: a full disk must not stop calls
            log.warning("could not write the activity log: %s", exc.strerror)

    def _append(self, data: bytes) -> None:
        # Whole batches under a lock, cut back on a failure, a torn tail set aside (``jsonl``).
        fd = jsonl.open_locked(self.path)
        try:
            size = os.fstat(fd).st_size
            if size and size + len(data) > self.max_bytes:
                os.replace(self.path, self.path.with_name(OLDER_FILE_NAME))
                rotated, fd = fd, -1
                os.close(rotated)
                fd = jsonl.open_locked(self.path)
            jsonl.append(fd, data, jsonl.torn_path(self.path), sync=False)
        finally:
            if fd >= 0:
                os.close(fd)

    def read(self) -> Iterator[ActivityRecord]:
        """Every record on disk, oldest first (the older file, then the current one)."""
        self.flush()
        for path in (self.path.with_name(OLDER_FILE_NAME), self.path):
            try:
                lines = path.read_text("utf-8", errors="replace").splitlines()
            except FileNotFoundError:
                continue
            for line in lines:
                try:
                    record = ActivityRecord.from_json(json.loads(line))
                except (ValueError, RecursionError):  # a damaged line: the others still read
                    record = None
                if record is not None:
                    yield record


class Activity:
    """The broker's call observer and kill switch, for one Helm home."""

    def __init__(self, home: Path, *, keep: int = KEEP, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        self.switch = KillSwitch(home)
        self.recent: deque[ActivityRecord] = deque(maxlen=keep)
        self.counts: dict[tuple[str, str], Count] = {}
        self.since = time.time()
        self._file = _LogFile(home / FILE_NAME, max_file_bytes)
        self._running: set[Watch] = set()
        self._listeners: list[Listener] = []
        self._last: tuple[Mapping[str, Any] | None, str] | None = None

    # -- the hook ------------------------------------------------------------------------
    def begin(self, ctx: CallContext, connection: str, operation: str) -> Watch:
        """A call arrived; ``Watch.refusal`` is set when its extension or connection is stopped."""
        refusal = self.switch.refusal(ctx.workspace, ctx.extension, connection)
        watch = Watch(ctx, connection, operation, asyncio.current_task(), refusal)
        self._running.add(watch)
        return watch

    def end(self, watch: Watch, result: Mapping[str, Any] | None) -> ActivityRecord:
        """The call is over: ``result`` is its envelope, None when it was cancelled."""
        self._running.discard(watch)
        duration = (time.perf_counter() - watch.started) * 1000
        ctx = watch.ctx
        outcome, message = _outcome(result)
        try:
            text, size = envelope_text(result)
            self._last = (result, text)
        except (TypeError, ValueError, RecursionError):  # not JSON: the caller will say so
            size, self._last = 0, None
        record = ActivityRecord(
            watch.time, ctx.workspace, ctx.extension, ctx.instance, watch.connection, watch.operation,
            duration, outcome, size, message, "extension" if ctx.requester is None else ctx.requester.role,
            watch.detail if outcome != OK else "",
        )  # fmt: skip
        self.recent.append(record)
        count = self.counts.get((ctx.workspace, ctx.extension))
        if count is None:
            count = self.counts[(ctx.workspace, ctx.extension)] = Count()
        count.calls += 1
        count.failed += outcome != OK
        self._file.add(record)
        for listener in list(self._listeners):
            try:
                listener(record)
            except Exception:  # a listener's bug must not turn into a failed call
                log.exception("an activity listener failed")
        return record

    def text_of(self, result: Mapping[str, Any]) -> str:
        """``result`` as the JSON text a frame receives — the text ``end`` measured, when it is
        the envelope of the call that just ended (the bridge asks at once), so a call's
        envelope is encoded once."""
        last, self._last = self._last, None
        if last is not None and last[0] is result:
            return last[1]
        return envelope_text(result)[0]

    # -- the kill switch -----------------------------------------------------------------
    def stop(
        self,
        workspace: str,
        extension: str,
        connection: str | None = None,
        *,
        by: str = "user",
        reason: str = "",
    ) -> int:
        """Stop an extension (or one connection of it) now: refuse its new calls and cancel
        those running. Returns how many running calls were cancelled; raises SettingsError
        when the stop cannot be recorded (nothing was cancelled then). ``by`` and ``reason``
        say who stopped it and why when it was not the user (a withdrawn version)."""
        stop = self.switch.set(workspace, extension, connection, True, by=by, reason=reason)
        cancelled = 0
        for watch in list(self._running):
            ctx = watch.ctx
            if watch.stopped_by is not None or watch.task is None or watch.task.done():
                continue
            if stop.covers(ctx.workspace, ctx.extension, watch.connection):
                watch.stopped_by = stop
                watch.task.cancel()
                cancelled += 1
        return cancelled

    def cancel(self, workspace: str, extension: str, refusal: CallError) -> int:
        """Cancel the running calls of an extension that the organisation's policy now forbids,
        each answered with ``refusal``; nothing is recorded in the user's stops (the policy
        refuses its new calls itself, for as long as it forbids it). Returns how many."""
        cancelled = 0
        for watch in list(self._running):
            ctx = watch.ctx
            if watch.stopped_by is not None or watch.task is None or watch.task.done():
                continue
            if (ctx.workspace, ctx.extension) == (workspace, extension):
                watch.stopped_by = refusal
                watch.task.cancel()
                cancelled += 1
        return cancelled

    def resume(self, workspace: str, extension: str, connection: str | None = None) -> None:
        """Turn a stopped extension (or connection) back on."""
        self.switch.set(workspace, extension, connection, False)

    def running(self, workspace: str, extension: str) -> int:
        """How many calls of ``extension`` are running now."""
        return sum(1 for w in self._running if (w.ctx.workspace, w.ctx.extension) == (workspace, extension))

    # -- reading -------------------------------------------------------------------------
    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every new record; returns the function that stops it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def history(self, limit: int = KEEP) -> list[ActivityRecord]:
        """The last ``limit`` records, oldest first: earlier runs of Helm from the log on disk,
        then this run's from memory (the same objects listeners were given)."""
        earlier = list(self._file.read())
        if self._file.written:
            earlier = earlier[: -self._file.written]
        kept: deque[ActivityRecord] = deque(earlier, maxlen=limit)
        kept.extend(self.recent)
        return list(kept)

    def flush(self) -> None:
        """Write what waits for the log now (the broker does it when it closes)."""
        self._file.flush()


def _outcome(result: Mapping[str, Any] | None) -> tuple[str, str]:
    """The outcome code and, for a failure, Helm's message."""
    if result is None:
        return CANCELLED, "the call was cancelled (its frame closed)"
    if result.get("ok"):
        return OK, ""
    error = result.get("error")
    if not isinstance(error, Mapping):
        return ErrorCode.UNAVAILABLE.value, ""
    code, message = error.get("code"), error.get("message")
    return (str(code) if code else ErrorCode.UNAVAILABLE.value), (message if isinstance(message, str) else "")


def envelope_text(result: Mapping[str, Any] | None) -> tuple[str, int]:
    """The envelope as compact JSON text and its size in UTF-8 bytes (``("", 0)`` for a
    cancelled call). A lone surrogate from a server is escaped, so the text stays UTF-8."""
    if result is None:
        return "", 0
    return compact_utf8(result)


def _iso(when: float) -> str:
    """``when`` as UTC ISO 8601 with milliseconds; the seconds are formatted once per second."""
    second = int(when)
    if _SECOND[0] != second:
        _SECOND[:] = [second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")]
    return f"{_SECOND[1]}.{int((when - second) * 1000):03d}+00:00"


_SECOND: list[Any] = [None, ""]
_quoted = json.encoder.encode_basestring
