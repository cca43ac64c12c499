"""The audit export: every audit record (and, where a sink asks, every activity record) goes to
the sinks in effect, without ever holding up the call that made it.

The home's own audit log stays the record of truth: the export hears a record only once it is
written there (``AuditLog.tap``), and a sink's trouble never reaches the log or the caller.

* Each sink has its own queue and its own thread (``SinkQueue``): ``offer`` only appends under a
  lock, so the broker's call path never waits for a file, a socket or a name lookup.
* A sink that is down keeps its entries and is tried again, after 0.5 s, then twice as long each
  time up to 30 s. Its queue holds at most ``bound`` entries (10 000); past that the newest are
  dropped and counted, and once the sink takes entries again it receives a ``dropped`` entry
  saying how many it lost and between which times. ``status`` shows each sink's state, its
  queue and what it dropped (Helm's Audit log window and ``helm audit sink list``).
* The sinks in effect are the organisation's (``set_managed``: plain ``SinkConfig`` objects,
  which the user cannot remove) and the user's (read from settings at each record, so a sink
  added with ``helm audit sink add`` is used from the next record on).
* ``close`` gives the queues a moment (2 s) to drain, then stops their threads; what is left is
  counted in the log, never waited on longer.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from broker.activity import ActivityRecord
from broker.audit import AuditRecord
from broker.errors import SettingsError
from broker.export.config import SinkConfig
from broker.export.records import Entry, activity_entry, audit_entry, dropped_entry
from broker.export.senders import CONNECT_SECONDS, Sender, sender_for

log = logging.getLogger("helm.export")

QUEUE_BOUND = 10_000
BATCH = 64
RETRY = (0.5, 30.0)
"""The first wait before a down sink is tried again, and the longest."""
DRAIN_SECONDS = 2.0
ACTIVITY_REFRESH_SECONDS = 1.0
"""How often a call's activity record reads the sinks from settings (audit records: always)."""

UserSinks = Callable[[], Sequence[SinkConfig]]
SenderFactory = Callable[[SinkConfig], Sender]


@dataclass(frozen=True)
class SinkStatus:
    """One sink as the user sees it: ``state`` is ``waiting`` (nothing sent yet), ``ok``,
    ``down`` (with ``error``) or ``misconfigured``."""

    name: str
    target: str
    managed: bool
    state: str
    queued: int = 0
    dropped: int = 0
    """Entries dropped since Helm started (a full queue while the sink was down)."""
    error: str = ""
    since: str = ""

    def line(self) -> str:
        who = "set by your organisation" if self.managed else f"sink {self.name}"
        said = f"{who}: {self.target} — {self.state}"
        if self.since:
            said += f" since {self.since}"
        if self.error:
            said += f" ({self.error})"
        if self.queued:
            said += f"; {self.queued} record(s) waiting"
        if self.dropped:
            said += f"; {self.dropped} record(s) dropped while it was down"
        return said


class SinkQueue:
    """One sink's bounded queue and the thread that empties it into the sink."""

    def __init__(self, config: SinkConfig, sender: Sender, *, bound: int, retry: tuple[float, float]) -> None:
        self.config, self.sender, self.bound, self.retry = config, sender, bound, retry
        self._cond = threading.Condition()
        self._queue: deque[Entry] = deque()
        self._dropped, self._first, self._last = 0, "", ""
        self.dropped_total = 0
        self._state, self._error, self._since = "waiting", "", ""
        self._stopping, self._deadline = False, 0.0
        self._thread = threading.Thread(target=self._run, name=f"helm.export {config.target}", daemon=True)
        self._thread.start()

    def offer(self, entry: Entry) -> None:
        """Queue ``entry`` (never blocks); a full queue drops and counts it."""
        with self._cond:
            if self._stopping:
                return
            if self._dropped and len(self._queue) < self.bound:
                self._queue.append(self._notice())
            if len(self._queue) >= self.bound:
                self._drop(str(entry.get("time", "")))
                return
            self._queue.append(entry)
            self._cond.notify()

    def _drop(self, when: str) -> None:
        if not self._dropped:
            self._first = when
            log.warning("the audit export to %s is full; records are dropped", self.config.target)
        self._dropped += 1
        self.dropped_total += 1
        self._last = when

    def _notice(self) -> Entry:
        notice = dropped_entry(self._dropped, self._first, self._last)
        self._dropped, self._first, self._last = 0, "", ""
        return notice

    def status(self) -> SinkStatus:
        with self._cond:
            c = self.config
            return SinkStatus(
                c.name, c.target, c.managed, self._state, len(self._queue), self.dropped_total,
                self._error, self._since,
            )  # fmt: skip

    def _run(self) -> None:
        delay = self.retry[0]
        while (batch := self._next()) is not None:
            try:
                self.sender.send(batch)
            except OSError as exc:
                self._went_down(exc)
                self._pause(delay)
                delay = min(delay * 2, self.retry[1])
                continue
            except Exception:  # a bug in Helm: lose this batch (counted), never the thread
                log.exception("the audit export to %s failed", self.config.target)
                with self._cond:
                    self.dropped_total += len(batch)
            delay = self.retry[0]
            with self._cond:
                for _ in batch:
                    self._queue.popleft()
                self._set_state("ok", "")
        self.sender.close()

    def _next(self) -> list[Entry] | None:
        """The next entries to send (None: stop), waiting until there are some."""
        with self._cond:
            while not self._queue and not self._dropped and not self._stopping:
                self._cond.wait()
            if self._stopping and (not self._queue or time.monotonic() >= self._deadline):
                return None
            if not self._queue:
                self._queue.append(self._notice())
            return list(itertools.islice(self._queue, BATCH))

    def _pause(self, delay: float) -> None:
        with self._cond:
            if self._stopping:
                delay = min(delay, max(0.0, self._deadline - time.monotonic()))
            self._cond.wait(delay)

    def _went_down(self, exc: OSError) -> None:
        error = exc.strerror or type(exc).__name__
        with self._cond:
            if self._state != "down":
                log.warning("the audit export to %s is down (%s); records wait", self.config.target, error)
            self._set_state("down", error)

    def _set_state(self, state: str, error: str) -> None:
        if state != self._state:
            self._since = datetime.now(UTC).isoformat(timespec="seconds")
        self._state, self._error = state, error

    def stop(self, drain: float) -> None:
        """Ask the thread to stop once the queue is empty, or after ``drain`` seconds."""
        with self._cond:
            if not self._stopping:
                self._stopping, self._deadline = True, time.monotonic() + drain
            self._cond.notify_all()

    def join(self, timeout: float) -> int:
        """Wait (at most ``timeout``) for the thread; how many entries were left unsent."""
        self._thread.join(timeout)
        with self._cond:
            return len(self._queue) + self._dropped


class AuditExporter:
    """The sinks in effect and their queues; ``audit``/``activity`` are the log's listeners."""

    def __init__(
        self,
        user: UserSinks,
        *,
        policy: UserSinks | None = None,
        bound: int = QUEUE_BOUND,
        retry: tuple[float, float] = RETRY,
        senders: SenderFactory = sender_for,
    ) -> None:
        self._user, self._bound, self._retry, self._senders = user, bound, retry, senders
        self._policy = policy
        """The sinks of the organisation's policy in force, read at each refresh."""
        self.managed: tuple[SinkConfig, ...] = ()
        self._last_user: tuple[SinkConfig, ...] = ()
        self._problem = ""
        self._queues: dict[SinkConfig, SinkQueue] = {}
        self._retired: list[SinkQueue] = []
        self._lock = threading.Lock()
        self._checked = 0.0
        self._closed = False

    def set_managed(self, configs: Sequence[SinkConfig]) -> None:
        """The organisation's sinks (its policy), used beside the user's and never removed by them."""
        self.managed = tuple(replace(c, managed=True) for c in configs)
        self.refresh()

    def refresh(self) -> tuple[SinkQueue, ...]:
        """Read the user's sinks again and start or stop queues to match; the queues in effect."""
        try:
            user, problem = tuple(self._user()), ""
        except SettingsError as err:  # keep exporting to what worked; say why the rest did not
            user, problem = self._last_user, str(err)
        policy = tuple(self._policy()) if self._policy is not None else ()
        with self._lock:
            self._last_user, self._problem = user, problem
            if self._closed:
                return ()
            wanted: dict[SinkConfig, None] = dict.fromkeys([*self.managed, *policy, *user])
            for config in [c for c in self._queues if c not in wanted]:
                gone = self._queues.pop(config)
                gone.stop(0.0)
                self._retired.append(gone)
            for config in wanted:
                if config not in self._queues:
                    self._queues[config] = SinkQueue(
                        config, self._senders(config), bound=self._bound, retry=self._retry
                    )
            self._checked = time.monotonic()
            return tuple(self._queues.values())

    def audit(self, rec: AuditRecord) -> None:
        """Export one audit record (the audit log's tap)."""
        queues = self.refresh()
        if queues:
            entry = audit_entry(rec)
            for queue in queues:
                queue.offer(entry)

    def activity(self, rec: ActivityRecord) -> None:
        """Export one activity record to the sinks that take them (an ``Activity`` listener)."""
        if time.monotonic() - self._checked > ACTIVITY_REFRESH_SECONDS:
            self.refresh()
        with self._lock:  # audit records may come from worker threads, which refresh the queues
            queues = [q for q in self._queues.values() if q.config.activity]
        if queues:
            entry = activity_entry(rec)
            for queue in queues:
                queue.offer(entry)

    def status(self) -> list[SinkStatus]:
        """Every sink in effect, and a line for user sinks that could not be read."""
        self.refresh()
        with self._lock:
            out = [q.status() for q in self._queues.values()]
            if self._problem:
                out.append(
                    SinkStatus("settings", "your audit sinks", False, "misconfigured", error=self._problem)
                )
        return out

    def close(self, drain: float = DRAIN_SECONDS) -> int:
        """Drain (at most ``drain`` seconds) and stop every queue; how many entries were not sent."""
        with self._lock:
            self._closed = True
            queues = [*self._queues.values(), *self._retired]
            self._queues, self._retired = {}, []
        for queue in queues:
            queue.stop(drain)
        lost = sum(q.join(drain + CONNECT_SECONDS + 1) for q in queues)
        if lost:
            log.warning("%d audit record(s) could not be exported before Helm closed", lost)
        return lost
