"""``helm dev``: one extension in a window, with the real bridge, broker and dialogs.

The extension is installed by reference into a workspace of the user's own Helm home, so its
calls use the user's real profiles and projects (or, replayed, a temporary home's fixtures).
Its frame comes from the same ``ExtensionHost`` and frame factory as the main window's, with
the same sandbox. Approval is the real review (``ui.dev.approval``); writes go through the real
confirmation dialog: author mode changes what the author sees, never what Helm allows.

Every save under the folder re-lints the manifest; while it has problems the page is closed
and the problems are listed with their JSON paths; once it is clean the page reloads. Every
event is also one line on the terminal (``ui.dev.terminal``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from broker import Broker
from broker.authoring.fixtures import FixtureBook
from broker.authoring.hints import call_hints
from broker.authoring.uses import manifest_uses, replayed_uses
from broker.builtin import STATE_CONNECTION
from broker.errors import FixtureError, ManifestError, SettingsError
from broker.extensions import install
from broker.manifest import MANIFEST_FILE, Manifest
from broker.manifest import load as load_manifest
from broker.summary import Confirmer
from ui.aio import OwnedTasks
from ui.dashboard import FrameSpec
from ui.dev.approval import DevApproval, ReviewFactory
from ui.dev.devtools import DevTools
from ui.dev.inspector import CallInspector, CallRecord, ObservedHandler
from ui.dev.lint import LintPanel
from ui.dev.terminal import TerminalReport
from ui.dev.watcher import FolderWatcher
from ui.dialogs.confirm import DialogConfirmer
from ui.dialogs.review import review_dialog
from ui.extension_frames import HostViewFactory
from ui.host.host import ExtensionHost
from ui.host.profile import ExtensionProfile
from ui.host.view import ExtensionView
from ui.qt import (
    QCloseEvent,
    QHBoxLayout,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    Qt,
    QTabWidget,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import monospace, plain_label, set_plain, visible
from ui.widgets.settings_form import defaults

DEV_INSTANCE = "dev"
"""The instance id of the page in author mode; kept across reloads (the rate limit counts it)."""


@dataclass(frozen=True)
class DevOptions:
    """``helm dev``'s switches: approve on the terminal (``--yes-dev``, in its own workspace
    only), open DevTools, save each call's envelope to fixtures (``--record``) or answer from
    them (``--replay``)."""

    yes: bool = False
    devtools: bool = False
    record: FixtureBook | None = None
    replay: FixtureBook | None = None
    """The fixtures the broker's kinds answer from (``--replay``), for what the terminal says."""


class DevWindow(QMainWindow):
    """The page on the left; calls, manifest problems and the page's console on the right."""

    pageLoaded = Signal()
    """The page (re)loaded and its ``window.helm`` is connected."""

    refreshed = Signal()
    """A lint-and-reload pass finished (whether or not the page could load)."""

    closed = Signal()

    def __init__(
        self,
        broker: Broker,
        workspace: str,
        folder: Path,
        *,
        confirm: Confirmer | None = None,
        review_factory: ReviewFactory = review_dialog,
        debounce_ms: int | None = None,
        report: TerminalReport | None = None,
        options: DevOptions = DevOptions(),
    ) -> None:
        super().__init__()
        self.broker, self.workspace, self.folder = broker, workspace, folder.resolve()
        self.report = report or TerminalReport(None)
        self.options = options
        self.manifest: Manifest | None = None
        self.view: ExtensionView | None = None
        self.approval = DevApproval(
            broker, workspace, self.report, self, review_factory=review_factory, yes=options.yes
        )
        self.approval.retry = self.schedule_refresh
        handler = ObservedHandler(broker, self._observed)
        self.host = ExtensionHost(handler, confirm or DialogConfirmer(self), self)
        self._frames = HostViewFactory(self.host)
        self.devtools = DevTools(f"DevTools — {self.folder.name}", self) if options.devtools else None
        self._watched: ExtensionProfile | None = None
        self._shown_uses: list[str] = []
        self._lint_clean: bool | None = None
        self._load_started = time.perf_counter()
        self._refresh_lock = asyncio.Lock()
        self._pending = False
        self._tasks = OwnedTasks(self)
        self.setWindowTitle(f"helm dev — {self.folder.name}")
        self.resize(1280, 800)
        self._build()
        kwargs = {} if debounce_ms is None else {"debounce_ms": debounce_ms}
        self.watcher = FolderWatcher(self.folder, self, **kwargs)
        self.watcher.changed.connect(self.schedule_refresh)

    # -- layout --------------------------------------------------------------------------
    def _build(self) -> None:
        central = QWidget(self)
        header = QHBoxLayout()
        self.reload_button = QPushButton("Reload", central)
        self.reload_button.clicked.connect(self._reload_clicked)
        self.status = plain_label("", central, wrap=False)
        header.addWidget(self.reload_button)
        header.addWidget(self.status, 1)
        self.pages = QStackedWidget(self)
        self.notice = plain_label("", self.pages)
        self.notice.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.pages.addWidget(self.notice)
        self.inspector = CallInspector(self)
        self.lint = LintPanel(self)
        self.console = QPlainTextEdit(self)
        self.console.setReadOnly(True)
        self.console.setFont(monospace())
        self.console.setMaximumBlockCount(2000)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.inspector, "Calls")
        self.tabs.addTab(self.lint, "Manifest")
        self.tabs.addTab(self.console, "Console")
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.pages)
        split.addWidget(self.tabs)
        split.setSizes([720, 560])
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(header)
        layout.addWidget(split, 1)
        self.setCentralWidget(central)

    def _say(self, text: str) -> None:
        set_plain(self.status, f"{self.workspace} · {text}")

    def _note(self, tag: str, line: str) -> None:
        """A line in the Console tab and on the terminal."""
        self.console.appendPlainText(visible(f"{time.strftime('%H:%M:%S')} {line}"))
        self.report.line(tag, line)

    # -- refresh: lint, install, review, (re)load ----------------------------------------
    def _reload_clicked(self) -> None:
        self.approval.ask_again()  # an explicit Reload asks for approval again
        self.schedule_refresh()

    def schedule_refresh(self) -> None:
        """Lint and reload soon; refreshes never overlap and a burst during one runs once after."""
        if self._refresh_lock.locked():
            self._pending = True
            return
        self._tasks.start(self.refresh())

    async def refresh(self) -> None:
        async with self._refresh_lock:
            while True:
                self._pending = False
                await self._refresh_once()
                if not self._pending:
                    break
        self.refreshed.emit()

    async def _refresh_once(self) -> None:
        file = str(self.folder / MANIFEST_FILE)
        try:
            manifest = load_manifest(self.folder)
        except ManifestError as exc:
            self.manifest, self._lint_clean = None, False
            self.lint.show_issues(exc.issues, file)
            self.report.lint(exc.issues, file)
            self.tabs.setCurrentWidget(self.lint)
            await self._close_page(f"{len(exc.issues)} manifest problem(s): the page is not loaded")
            self._say("manifest has problems")
            return
        self.lint.show_issues([], file)
        if self._lint_clean is not True:
            self.report.lint([], file)
            self._lint_clean = True
        try:
            install(self.broker.home, self.workspace, self.folder)
        except SettingsError as exc:
            self._note("helm", f"cannot install: {exc}")
            await self._close_page(str(exc))
            self._say("cannot install")
            return
        self._show_uses(manifest)
        await self.approval.ensure(manifest)
        await self._show_page(manifest)

    def _show_uses(self, manifest: Manifest) -> None:
        """Which profiles and folders the connections use, printed again when that changes."""
        settings, book = self.broker.home.settings(), self.options.replay
        uses = manifest_uses(settings, manifest) if book is None else replayed_uses(manifest, book)
        if uses != self._shown_uses:
            self.report.lines("uses", uses)
            self._shown_uses = uses

    async def _show_page(self, manifest: Manifest) -> None:
        same = (
            self.view is not None
            and self.manifest is not None
            and self.manifest.id == manifest.id
            and self.manifest.entry == manifest.entry
        )
        self.manifest = manifest
        self._load_started = time.perf_counter()
        if same and self.view is not None:
            self.view.reload()
        else:
            await self._close_page("")
            self._open_page(manifest)
        self._say(f"{manifest.name} {manifest.version} ({manifest.id}) · loading")

    def _open_page(self, manifest: Manifest) -> None:
        frame = FrameSpec(self.workspace, manifest, DEV_INSTANCE, defaults(manifest.settings_form))
        profile = self.host.profile(self.workspace, manifest.id, manifest.folder)
        if profile is not self._watched:
            profile.interceptor.blocked.connect(lambda why: self._note("blocked", f"a request: {why}"))
            self._watched = profile
        view = self._frames(frame, self.pages)
        assert isinstance(view, ExtensionView)
        view.ready.connect(self._page_ready)
        view.loadFailed.connect(lambda: self._note("error", f"{manifest.entry} failed to load"))
        view.page.console.connect(self._console)
        self.view = view
        self.pages.addWidget(view)
        self.pages.setCurrentWidget(view)
        if self.devtools is not None:
            self.devtools.inspect(view.page)

    def _page_ready(self) -> None:
        if self.manifest is not None:
            self.report.reloaded(self.manifest.entry, (time.perf_counter() - self._load_started) * 1000)
            stamp = time.strftime("%H:%M:%S")
            self._say(f"{self.manifest.name} {self.manifest.version} ({self.manifest.id}) · loaded {stamp}")
        self.pageLoaded.emit()

    def _console(self, level: int, message: str, line: int, source: str) -> None:
        self.console.appendPlainText(visible(f"{time.strftime('%H:%M:%S')} {message} ({source}:{line})"))
        self.report.console(level, message, line, source)

    def _observed(self, record: CallRecord) -> None:
        """A call ended: its hints, the inspector, the fixtures (``--record``), the terminal."""
        conn = self.manifest.connection(record.connection) if self.manifest is not None else None
        if conn is not None and isinstance(record.args, dict):
            record = dataclasses.replace(record, hints=call_hints(conn, record.operation, record.args))
        self.inspector.add(record)
        self.report.call(record, self._record(record))

    def _record(self, record: CallRecord) -> str:
        book = self.options.record
        if book is None or record.connection == STATE_CONNECTION or not isinstance(record.args, dict):
            return ""
        try:
            saved = book.record(record.connection, record.operation, record.args, record.envelope)
        except (FixtureError, OSError) as exc:
            return f"not recorded: {exc}"
        return f"recorded in {book.file(record.connection)}" if saved else ""

    async def _close_page(self, notice: str) -> None:
        set_plain(self.notice, notice)
        self.pages.setCurrentWidget(self.notice)
        view, self.view = self.view, None
        if view is not None:
            if self.devtools is not None:
                self.devtools.inspect(None)
            self.pages.removeWidget(view)
            await self.host.close(view)

    # -- closing -------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop watching, finish the refresh in progress, close the page and its host."""
        self.watcher.stop()
        await self._tasks.aclose()
        await self._close_page("")
        await self.host.aclose()
        if self.devtools is not None:
            self.devtools.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.watcher.stop()
        super().closeEvent(event)
        self.closed.emit()
