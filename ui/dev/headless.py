"""``helm ext test``: an extension's page in a real, unseen frame, until it is quiet.

The page runs in the same ``ExtensionHost`` frame as on the dashboard; the broker it calls
answers from fixtures (``broker.authoring.replay``). The run ends once the page has loaded and
no call has run, started or ended for ``settle`` seconds — or at ``timeout``. Every call and
console message is a terminal line (``ui.dev.terminal``). The run fails for an uncaught error
in the page, a call that failed other than as its fixture recorded it, or a page that did not
load in time.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from broker import Broker, Decision, WriteSummary
from broker.authoring.fixtures import FixtureBook
from broker.context import CallContext
from broker.manifest import Manifest
from broker.summary import Confirmer
from ui.dashboard import FrameSpec
from ui.dev.inspector import CallRecord, ObservedHandler
from ui.dev.terminal import TerminalReport, is_uncaught, source_name
from ui.extension_frames import HostViewFactory
from ui.host.bridge import CallHandler
from ui.host.host import ExtensionHost
from ui.host.view import ExtensionView
from ui.qt import QWidget
from ui.widgets.settings_form import defaults

TEST_INSTANCE = "test"


@dataclass
class PageOutcome:
    """What one run saw; ``passed`` when the page loaded with no uncaught error or failed call."""

    loaded: bool = False
    timed_out: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    failed: list[CallRecord] = field(default_factory=list)
    uncaught: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.loaded and not self.timed_out and not self.failed and not self.uncaught

    def summary(self) -> str:
        if self.passed:
            return f"PASS: the page loaded; {len(self.calls)} call(s), none failed; no uncaught error"
        problems = [f"{len(self.uncaught)} uncaught error(s)", f"{len(self.failed)} failed call(s)"]
        if not self.loaded:
            problems.insert(0, "the page did not load")
        elif self.timed_out:
            problems.insert(0, "calls were still running at the time limit")
        return "FAIL: " + ", ".join(problems)


class ConfirmEvery:
    """Answers every write Confirm, with a line saying so: nobody watches a headless test."""

    def __init__(self, report: TerminalReport) -> None:
        self.report = report

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.report.line("write", f"{summary.connection}.{summary.operation} confirmed (helm ext test)")
        return Decision.CONFIRMED


class Tracked:
    """A ``CallHandler`` that counts the calls in flight and marks every start and end."""

    def __init__(self, inner: CallHandler, activity: asyncio.Event) -> None:
        self.inner, self.activity, self.in_flight = inner, activity, 0

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        self.in_flight += 1
        self.activity.set()
        try:
            return await self.inner.request_json(ctx, connection_id, operation, args_json, confirm)
        finally:
            self.in_flight -= 1
            self.activity.set()


class PageTest:
    """Runs one page against ``broker`` (whose kinds replay ``book``) and reports it."""

    def __init__(self, broker: Broker, workspace: str, book: FixtureBook, report: TerminalReport) -> None:
        self.broker, self.workspace, self.book, self.report = broker, workspace, book, report
        self.outcome = PageOutcome()
        self._activity = asyncio.Event()
        self._ended = asyncio.Event()
        observed = ObservedHandler(broker, self._call)
        self._tracked = Tracked(observed, self._activity)
        self.host = ExtensionHost(self._tracked, ConfirmEvery(report))
        self._parent = QWidget()

    async def run(self, manifest: Manifest, *, limit: float, settle: float) -> PageOutcome:
        """Load the page and wait until it is quiet (``settle`` s) or ``limit`` s have passed."""
        started = time.perf_counter()
        frame = FrameSpec(self.workspace, manifest, TEST_INSTANCE, defaults(manifest.settings_form))
        view = HostViewFactory(self.host)(frame, self._parent)
        assert isinstance(view, ExtensionView)
        view.ready.connect(lambda: self._ready(manifest.entry, started))
        view.loadFailed.connect(self._ended.set)
        view.page.console.connect(self._console)
        try:
            async with asyncio.timeout(limit):
                await self._ended.wait()
                if self.outcome.loaded:
                    await self._quiet(settle)
        except TimeoutError:
            self.outcome.timed_out = True
        await self.host.aclose()
        self._parent.deleteLater()
        return self.outcome

    async def _quiet(self, settle: float) -> None:
        """Until no call runs, starts or ends for ``settle`` seconds."""
        while True:
            self._activity.clear()
            if self._tracked.in_flight:
                await self._activity.wait()
                continue
            try:
                await asyncio.wait_for(self._activity.wait(), settle)
            except TimeoutError:
                return

    def _ready(self, entry: str, started: float) -> None:
        if not self.outcome.loaded:
            self.outcome.loaded = True
            self.report.reloaded(entry, (time.perf_counter() - started) * 1000)
        self._ended.set()

    def _call(self, record: CallRecord) -> None:
        self.outcome.calls.append(record)
        recorded = (
            not record.ok
            and isinstance(record.args, dict)
            and self.book.answered(record.connection, record.operation, record.args, record.envelope)
        )
        if not record.ok and not recorded:
            self.outcome.failed.append(record)
        self.report.call(record, "as its fixture recorded" if recorded else "")

    def _console(self, level: int, message: str, line: int, source: str) -> None:
        if is_uncaught(level, message):
            self.outcome.uncaught.append(f"{message} ({source_name(source, line)})")
        self.report.console(level, message, line, source)
