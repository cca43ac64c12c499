"""``helm app test``: an app in a real, unseen frame, opened as the dashboard opens it, until
it is quiet.

The app's frame is made by the dashboard's own view factory (``AppAwareFactory`` over an
``AppHost``): the same check against the server, host page, sandbox, opening call and broker
path. Nobody watches, so every write the app asks for is declined in Helm's real write dialog
and every link it asks to open is refused; each is a line. The run is settled once the app has
initialized, no call of it is running and neither a call nor its page (a ``MutationObserver`` in
Helm's isolated world of the app's frame) has changed for ``settle`` seconds — or at ``limit``.
Every call, refusal, blocked request and console message is a terminal line
(``ui.dev.terminal``); then the text the app shows, bounded.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from broker.activity import ActivityRecord
from broker.apps.trial import Quiet, TrialOutcome, console_error
from broker.broker import Broker
from broker.manifest import Manifest
from broker.summary import WriteSummary
from ui.apps.frame import AppFrame
from ui.apps.host import AppAwareFactory, AppHost
from ui.apps.view import AppView
from ui.dashboard import FrameSpec
from ui.dev.terminal import TerminalReport, source_name
from ui.dialogs.confirm import ConfirmDialog
from ui.qt import QTimer, QVBoxLayout, QWebEngineScript, QWidget
from ui.text import elide

TEST_INSTANCE = "test"
SIZE = (960, 720)
"""The frame's size: a dashboard card's at its largest (two columns, five rows) and more."""
POLL_SECONDS = 0.1
PROBE_SECONDS = 5.0
TEXT_CHARS = 4000
PROBE = (
    "(() => {"
    " const s = window.__helmQuiet || (window.__helmQuiet = { changes: 0 });"
    " if (!s.watching) { s.watching = true; new MutationObserver(() => { s.changes += 1; })"
    "  .observe(document, { subtree: true, childList: true, attributes: true, characterData: true }); }"
    " const body = document.body; const text = body ? body.innerText : '';"
    f" return JSON.stringify({{ changes: s.changes, text: text.slice(0, {TEXT_CHARS}), length: text.length,"
    "  elements: body ? body.getElementsByTagName('*').length : 0 });"
    "})()"
)
"""Run in Helm's isolated world of the app's frame: the app's own scripts cannot see it. It
answers JSON text (an object from an isolated world of a subframe arrives empty)."""


class AppTrial:
    """Runs one added app headless against ``broker`` and reports it on ``report``."""

    def __init__(self, broker: Broker, workspace: str, report: TerminalReport) -> None:
        self.broker, self.workspace, self.report = broker, workspace, report
        self.outcome = TrialOutcome()
        self.host = AppHost(broker, dialogs=self._decline, open_url=lambda _url: None, guard_ms=0,
                            observe=self._traffic)  # fmt: skip
        self.host.linkAsked.connect(self._refuse_link)
        self._asked: dict[Any, str] = {}
        """The app's requests by id: their method, for a refusal's line."""
        self._ext = ""
        self._quiet = Quiet(time.monotonic())
        self._window = QWidget()
        self._window.resize(*SIZE)
        self._layout = QVBoxLayout(self._window)
        self._layout.setContentsMargins(0, 0, 0, 0)

    async def run(
        self, manifest: Manifest, settings: dict[str, Any], *, limit: float, settle: float
    ) -> TrialOutcome:
        """Open the app with ``settings`` and wait until it settles, at most ``limit`` s."""
        self._ext = manifest.id
        stop = self.broker.activity.subscribe(self._record)
        frame = AppAwareFactory(_no_extension, self.host)(
            FrameSpec(self.workspace, manifest, TEST_INSTANCE, settings), self._window
        )
        assert isinstance(frame, AppFrame)
        frame.told.connect(lambda text: self.report.line("notice", text))
        self._layout.addWidget(frame)
        self._window.show()
        probe: dict[str, Any] | None = None
        try:
            async with asyncio.timeout(limit):
                view = await self._opened(frame)
                if view is not None:
                    probe = await self._settled(frame, view, settle)
        except TimeoutError:
            probe = await self._timed_out(frame)
        finally:
            stop()
        self._finish(probe)
        await self.host.aclose()
        self._window.deleteLater()
        return self.outcome

    async def _opened(self, frame: AppFrame) -> AppView | None:
        await frame.opening
        view = frame.view
        if view is None:
            self._problem("helm", f"the app did not open: {frame.notice.text()}")
            return None
        self.outcome.opened = True
        view.page.console.connect(self._console)
        view.profile.interceptor.blocked.connect(lambda why: self._problem("blocked", why))
        view.loader.blocked.connect(lambda line: self._problem("blocked", f"a load from {line}"))
        await view.session.started.wait()
        self.outcome.initialized = True
        return view

    async def _settled(self, frame: AppFrame, view: AppView, settle: float) -> dict[str, Any] | None:
        """Until nothing ran or changed for ``settle`` seconds; the last probe of the page."""
        changes: object = None
        while True:
            probe = await self._probe(view)
            now = time.monotonic()
            seen = None if probe is None else probe.get("changes")
            if probe is None or seen != changes or self._running(frame):
                changes = seen
                self._quiet.busy(now)
            elif self._quiet.settled(now, settle):
                return probe
            await asyncio.sleep(POLL_SECONDS)  # a poll of the page, bounded by run()'s limit

    async def _timed_out(self, frame: AppFrame) -> dict[str, Any] | None:
        self.outcome.pending = self._running(frame)
        view = frame.view
        if view is None or not self.outcome.initialized:
            if self.outcome.opened and not self.outcome.initialized:
                self._problem("helm", "the app did not initialize with Helm within the time limit")
            elif not self.outcome.opened:
                self._problem("helm", "the app did not open within the time limit")
            return None
        if self.outcome.pending:
            self._problem("helm", f"{self.outcome.pending} call(s) still running at the time limit")
        else:
            self.outcome.still_changing = True
            self.report.line(
                "helm", "the app's page still changed at the time limit; its text as it was then"
            )
        return await self._probe(view)

    def _running(self, frame: AppFrame) -> int:
        launching = frame.launching is not None and not frame.launching.done()
        return self.broker.activity.running(self.workspace, self._ext) + launching

    async def _probe(self, view: AppView) -> dict[str, Any] | None:
        """The app's page as Helm's isolated world of its frame sees it (None: no frame yet)."""
        frames = view.page.mainFrame().children()
        if not frames:
            return None
        found: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(value: Any) -> None:
            if not found.done():
                found.set_result(value)

        frames[0].runJavaScript(PROBE, QWebEngineScript.ScriptWorldId.ApplicationWorld.value, done)
        try:
            value = json.loads(str(await asyncio.wait_for(found, PROBE_SECONDS)))
        except (TimeoutError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _finish(self, probe: dict[str, Any] | None) -> None:
        if probe is not None:
            self.outcome.text = str(probe.get("text", ""))
            self.outcome.text_length = int(probe.get("length") or 0)
            shows = bool(self.outcome.text.strip()) or int(probe.get("elements") or 0) > 0
            self.outcome.rendered = self.outcome.initialized and shows
        text = self.outcome.text.strip()
        if text:
            more = self.outcome.text_length - len(self.outcome.text)
            self.report.line("text", text + (f"\n… ({more} more characters)" if more > 0 else ""))
        elif self.outcome.initialized:
            self.report.line("text", "(the app shows no text)")

    # -- what the app does ---------------------------------------------------------------
    def _record(self, record: ActivityRecord) -> None:
        if (record.workspace, record.extension) != (self.workspace, self._ext):
            return
        self._quiet.busy(time.monotonic())
        self.outcome.calls += 1
        line = f"{record.connection}.{record.operation} {record.duration_ms:.0f} ms {record.outcome}"
        if record.ok:
            self.report.line("call", line)
        else:
            self._problem("call", line + (f": {elide(record.message, 240)}" if record.message else ""))

    def _traffic(self, direction: str, text: str) -> None:
        """Every message between the app and Helm: an error Helm answered is a refusal, unless
        it is a call's (that call's line says it, with its contract code)."""
        try:
            message = json.loads(text)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if direction.startswith("app"):
            if isinstance(message.get("method"), str) and "id" in message:
                self._asked[json.dumps(message["id"])] = message["method"]
            return
        error = message.get("error")
        rid = json.dumps(message.get("id"))
        method = self._asked.pop(rid, "a message") if "method" not in message else None
        if not isinstance(error, dict) or method is None:
            return
        data = error.get("data")
        if isinstance(data, dict) and data.get("code"):
            return
        self._problem("refused", f"{elide(str(method), 100)}: {error.get('message')} ({error.get('code')})")

    def _decline(
        self, summary: WriteSummary, parent: QWidget | None, *, remaining: float | None
    ) -> ConfirmDialog:
        """Helm's write dialog, answered Cancel as soon as it opens: nobody is there to confirm."""
        dialog = ConfirmDialog(summary, parent, remaining=remaining, guard_ms=0)
        QTimer.singleShot(0, dialog.reject)
        self.report.line(
            "write",
            f"declined {summary.connection}.{summary.operation}: helm app test declines every write "
            "(--read TOOL marks a tool as only reading)",
        )
        return dialog

    def _refuse_link(self, dialog: Any) -> None:
        QTimer.singleShot(0, dialog.reject)
        self.report.line("refused", "the app asked to open a link: helm app test opens none")

    def _console(self, level: int, message: str, line: int, source: str) -> None:
        if console_error(level, message, source):
            self._problem("error", f"{message} ({source_name(source, line)})")
        else:
            self.report.console(level, message, line, source)

    def _problem(self, tag: str, text: str) -> None:
        self.outcome.problems.append(text)
        self.report.line(tag, text)


def _no_extension(frame: FrameSpec, parent: QWidget) -> QWidget:
    raise AssertionError(f"{frame.manifest.id} is an extension, not an MCP App")
