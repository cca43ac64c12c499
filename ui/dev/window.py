"""``helm dev``: one extension in a window, with the real bridge, broker and dialogs.

The extension is installed by reference into a workspace of the user's own Helm home, so its
calls use the user's real profiles and projects. Plugin review is the real review dialog
(shown when the reviewed part of the manifest is new or changed), and Approve approves the
snapshot it showed (a manifest saved while the dialog is open is refused and reviewed again);
writes go through the real confirmation dialog: author mode changes what the author sees,
never what Helm allows.

Every save under the folder re-lints the manifest; while it has problems the page is closed
and the problems are listed with their JSON paths; once it is clean the page reloads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from broker import Broker, CallContext, Decision
from broker.errors import ApprovalChanged, HelmError, ManifestError, SettingsError
from broker.extensions import Reviewed, approve, install, review
from broker.manifest import MANIFEST_FILE, Manifest
from broker.manifest import load as load_manifest
from broker.summary import Confirmer
from broker.widget_state import StatefulCalls, StateStore
from ui.aio import OwnedTasks
from ui.dev.inspector import CallInspector, ObservedHandler
from ui.dev.lint import LintPanel
from ui.dev.watcher import FolderWatcher
from ui.dialogs.base import answer
from ui.dialogs.confirm import DialogConfirmer
from ui.dialogs.review import ReviewDialog, review_dialog
from ui.host import ExtensionProfile, ExtensionView, extension_host
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

log = logging.getLogger(__name__)

DEV_INSTANCE = "dev"
"""The instance id of the page in author mode; kept across reloads (the rate limit counts it)."""

ReviewFactory = Callable[[Reviewed, QWidget | None], ReviewDialog]
"""Makes the review dialog for a snapshot (tests pass one without the input guard)."""

_CONSOLE_LEVELS = {0: "info", 1: "warning", 2: "error"}


class DevWindow(QMainWindow):
    """The page on the left; calls, manifest problems and the page's console on the right."""

    pageLoaded = Signal()
    """The page (re)loaded and its ``window.helm`` is connected."""

    refreshed = Signal()
    """A lint-and-reload pass finished (whether or not the page could load)."""

    def __init__(
        self,
        broker: Broker,
        workspace: str,
        folder: Path,
        *,
        confirm: Confirmer | None = None,
        review_factory: ReviewFactory = review_dialog,
        debounce_ms: int | None = None,
    ) -> None:
        super().__init__()
        self.broker = broker
        self.workspace = workspace
        self.folder = folder.resolve()
        self.manifest: Manifest | None = None
        self.view: ExtensionView | None = None
        self._profile: ExtensionProfile | None = None
        self._confirm = confirm or DialogConfirmer(self)
        self._review_factory = review_factory
        self._declined_digest: str | None = None
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

    def _log(self, line: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.console.appendPlainText(visible(f"{stamp} {line}"))

    # -- refresh: lint, install, review, (re)load ----------------------------------------
    def _reload_clicked(self) -> None:
        self._declined_digest = None  # an explicit Reload asks for approval again
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
        try:
            manifest = load_manifest(self.folder)
        except ManifestError as exc:
            self.manifest = None
            self.lint.show_issues(exc.issues, str(self.folder / MANIFEST_FILE))
            self.tabs.setCurrentWidget(self.lint)
            await self._close_page(f"{len(exc.issues)} manifest problem(s): the page is not loaded")
            self._say("manifest has problems")
            return
        self.lint.show_issues([], str(self.folder / MANIFEST_FILE))
        try:
            install(self.broker.home, self.workspace, self.folder)
        except SettingsError as exc:
            await self._close_page(str(exc))
            self._say("cannot install")
            return
        await self._review_if_needed(manifest)
        await self._show_page(manifest)

    async def _review_if_needed(self, manifest: Manifest) -> None:
        if not self.broker.standing(self.workspace, manifest.id).needs_review:
            return
        digest = manifest.digest()
        if digest == self._declined_digest:
            return  # asked already for this exact manifest; a change or the Reload button asks again
        try:
            reviewed = await review(self.broker, self.workspace, manifest.id)
        except HelmError as exc:
            self._log(f"cannot review {manifest.id}: {exc}")
            return
        decision = await answer(self._review_factory(reviewed, self))
        if decision is not Decision.CONFIRMED:
            self._declined_digest = digest
            self._log(f"not approved: every call of {manifest.id} returns refused until you approve it")
            return
        try:
            await approve(self.broker, reviewed)  # exactly what the dialog showed
        except ApprovalChanged as exc:
            self._log(f"not approved: {exc}")
            self.schedule_refresh()  # the change that refused it has its own review
            return
        self._declined_digest = None
        self._log(f"approved {manifest.id}")

    async def _show_page(self, manifest: Manifest) -> None:
        same = (
            self.view is not None
            and self.manifest is not None
            and self.manifest.id == manifest.id
            and self.manifest.entry == manifest.entry
        )
        self.manifest = manifest
        if same and self.view is not None:
            self.view.reload()
        else:
            await self._close_page("")
            self._open_page(manifest)
        self._say(f"{manifest.name} {manifest.version} ({manifest.id}) · loading")

    def _open_page(self, manifest: Manifest) -> None:
        host = extension_host(self.workspace, manifest.id)
        self._profile = ExtensionProfile(self.folder, host, self)
        self._profile.interceptor.blocked.connect(lambda why: self._log(f"blocked a request: {why}"))
        view = ExtensionView(
            self._profile,
            manifest.entry,
            CallContext(self.workspace, manifest.id, DEV_INSTANCE),
            ObservedHandler(
                StatefulCalls(self.broker, StateStore(self.broker.home.path)), self.inspector.add
            ),
            self._confirm,
            self.pages,
        )
        view.ready.connect(self._page_ready)
        view.loadFailed.connect(lambda: self._log(f"{manifest.entry} failed to load"))
        view.page.console.connect(self._console)
        self.view = view
        self.pages.addWidget(view)
        self.pages.setCurrentWidget(view)
        view.load()

    def _page_ready(self) -> None:
        if self.manifest is not None:
            stamp = datetime.now().strftime("%H:%M:%S")
            self._say(f"{self.manifest.name} {self.manifest.version} ({self.manifest.id}) · loaded {stamp}")
        self.pageLoaded.emit()

    def _console(self, level: int, message: str, line: int, source: str) -> None:
        self._log(f"[{_CONSOLE_LEVELS.get(level, level)}] {message} ({source.rsplit('/', 1)[-1]}:{line})")

    async def _close_page(self, notice: str) -> None:
        set_plain(self.notice, notice)
        self.pages.setCurrentWidget(self.notice)
        view, profile = self.view, self._profile
        self.view = self._profile = None
        if view is not None:
            self.pages.removeWidget(view)
            await view.aclose()
        if profile is not None:
            profile.deleteLater()

    # -- closing -------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop watching, finish the refresh in progress and close the page."""
        self.watcher.stop()
        await self._tasks.aclose()
        await self._close_page("")

    def closeEvent(self, event: QCloseEvent) -> None:
        self.watcher.stop()
        super().closeEvent(event)
