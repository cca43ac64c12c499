"""``helm dev --server S --app URI``: an app author's window on their own Helm home.

The app runs exactly as on the dashboard — the same review, host page, sandbox, broker path and
write dialog — with a log beside it: every JSON-RPC message between the app and Helm, the app's
console and each request Helm blocked. Reload reads the server again: an app that changed (new
HTML, CSP or tools) is shown for review first, as a user would see it, and runs once approved.
The app's settings (the arguments of the tool that opens it) are the form's defaults; Settings
shows the form, as the app's card does, and Apply runs the app again with what was applied.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from broker.apps.errors import AppError
from broker.apps.spec import app_id
from broker.apps.verify import open_app
from broker.broker import Broker
from broker.errors import CallError, HelmError
from ui.aio import OwnedTasks
from ui.apps.add import review_and_add
from ui.apps.frame import AppFrame
from ui.apps.host import AppHost
from ui.apps.view import AppView
from ui.dev.terminal import CONSOLE_LEVELS
from ui.dialogs.base import GUARD_MS
from ui.qt import (
    QCloseEvent,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QSize,
    QSplitter,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import elide, plain_label, set_plain
from ui.widgets.settings_form import SettingsForm, defaults

DEV_INSTANCE = "dev"
MAX_LOGGED = 2000
APP_SHARE, LOG_SHARE = 3, 2
MIN_LOG = 200
"""How the window's width is shared between the app and the log when it opens."""


class AppDevWindow(QMainWindow):
    reviewing = Signal(object)
    """The ``AppReviewDialog`` now shown."""

    def __init__(
        self, broker: Broker, workspace: str, server: str, uri: str, *, guard_ms: int = GUARD_MS
    ) -> None:
        super().__init__()
        self._guard_ms = guard_ms
        self.broker, self.workspace, self.server, self.uri = broker, workspace, server, uri
        self.ext_id = app_id(server, uri)
        self.setWindowTitle(f"helm dev — {elide(uri, 80)}")
        self.resize(1200, 760)
        self.apps = AppHost(broker, observe=self._traffic)
        self.apps.frameReady.connect(self._ready)
        self.apps.reviewAsked.connect(lambda _ws, _ext: self.schedule_refresh())
        self.frame: AppFrame | None = None
        self.tasks = OwnedTasks(self)
        self.task: asyncio.Task[None] | None = None
        body = QWidget(self)
        col = QVBoxLayout(body)
        self.status = plain_label("", body)
        col.addWidget(self.status)
        self.reload_button = QPushButton("Reload", body)
        self.reload_button.clicked.connect(self.schedule_refresh)
        col.addWidget(self.reload_button)
        self.settings_button = QPushButton("Settings", body)
        self.settings_button.setCheckable(True)
        self.settings_button.toggled.connect(self._show_settings)
        col.addWidget(self.settings_button)
        self.settings: dict[str, Any] | None = None
        """What the author applied in the app's settings (None: the form's defaults)."""
        self.form: SettingsForm | None = None
        self.body_layout = col
        self.split = QSplitter(Qt.Orientation.Horizontal, body)
        self.slot = QWidget(self.split)
        self.slot_layout = QVBoxLayout(self.slot)
        self.log = QPlainTextEdit(self.split)
        self.log.setAccessibleName("Messages between the app and Helm")
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(MAX_LOGGED)
        self.log.setMinimumWidth(MIN_LOG)  # however wide the app asks to be
        # The app gets most of the width from the start (its slot is empty until it runs, and
        # an empty widget's size hint would leave it a sliver); the user can drag the handle.
        self.split.setStretchFactor(0, 3)
        self.split.setStretchFactor(1, 2)
        self.split.setSizes([APP_SHARE * 240, LOG_SHARE * 240])
        col.addWidget(self.split, 1)
        self.setCentralWidget(body)

    def _log(self, line: str) -> None:
        self.log.appendPlainText(line)

    def _traffic(self, direction: str, text: str) -> None:
        try:
            method = json.loads(text).get("method")
        except (ValueError, AttributeError):
            method = None
        self._log(f"{direction} {method or 'answer'}: {elide(text, 400)}")

    def _ready(self, view: AppView) -> None:
        set_plain(self.status, f"{view.opened.name} ({self.uri}) · running")
        view.page.console.connect(self._console)
        view.profile.interceptor.blocked.connect(lambda why: self._log(f"blocked a request: {why}"))
        view.loader.blocked.connect(lambda line: self._log(f"blocked a load from {line}"))

    def _console(self, level: int, message: str, line: int, source: str) -> None:
        where = f" ({source.rsplit('/', 1)[-1]}:{line})" if source.startswith(("http", "helm")) else ""
        self._log(f"console [{CONSOLE_LEVELS.get(level, str(level))}] {elide(message, 2000)}{where}")

    def schedule_refresh(self) -> None:
        if self.task is None or self.task.done():
            self.task = self.tasks.start(self.refresh())

    async def refresh(self) -> None:
        await self._close_frame()
        set_plain(self.status, f"reading {self.uri} from {self.server}…")
        try:
            await open_app(self.broker, self.workspace, self.ext_id)
        except (AppError, HelmError) as err:
            self._log(f"needs review: {err}")
            if not await self._review():
                return
        except CallError as err:
            set_plain(self.status, f"{err.code.value}: {err.message}")
            return
        self.frame = self.apps.frame(self.workspace, self.ext_id, DEV_INSTANCE, self.slot, self.settings)
        self.frame.sizeReported.connect(self._app_sized)
        self.frame.settingsNeeded.connect(lambda: self.settings_button.setChecked(True))
        self.slot_layout.addWidget(self.frame)
        self._share()

    def _show_settings(self, on: bool) -> None:
        if self.form is not None:
            self.body_layout.removeWidget(self.form)
            self.form.deleteLater()
            self.form = None
        if not on:
            return
        try:
            form = self.broker.manifest(self.workspace, self.ext_id).settings_form
        except HelmError as err:  # not added yet: Reload reviews it first
            set_plain(self.status, f"No settings yet: {err}")
            return
        values = self.settings if self.settings is not None else defaults(form)
        self.form = SettingsForm(form, values, self)
        self.form.applied.connect(self._apply)
        self.body_layout.insertWidget(3, self.form)  # below the Settings button

    def _apply(self, values: dict[str, Any]) -> None:
        self.settings = values
        self.settings_button.setChecked(False)
        self.schedule_refresh()

    def _share(self, app_width: int = 0) -> None:
        """The app's pane gets its share of the width, or the width the app reported if that is
        more (the log keeps at least ``MIN_LOG`` pixels)."""
        total = max(self.split.width(), self.width() - 40, 2 * MIN_LOG)
        app = max(total * APP_SHARE // (APP_SHARE + LOG_SHARE), min(app_width, total - MIN_LOG))
        self.split.setSizes([app, total - app])

    def _app_sized(self, size: QSize) -> None:
        """The app's pane follows the size the app reports (bounded by ``AppFrame``): wider than
        its share when the app asks, the window widening too if the log would get less than
        ``MIN_LOG``, and the window taller when the app is taller than its pane — both within the
        screen. It is never made narrower than its share or shorter: an app reports the width it
        has (the SDK sends its frame's), however narrow, and a pane the author dragged stays."""
        room = self.screen().availableGeometry()
        width, height = size.width(), size.height()
        if width > self.split.sizes()[0]:
            short = width - (self.split.width() - MIN_LOG - self.split.handleWidth())
            if short > 0:
                self.resize(min(self.width() + short, max(room.width(), self.width())), self.height())
            self._share(width)
        view = self.frame.view if self.frame is not None else None
        shown = view.height() if view is not None else self.slot.height()
        if height > shown:
            self.resize(self.width(), min(self.height() + height - shown, max(room.height(), self.height())))

    async def _review(self) -> bool:
        manifest, message = await review_and_add(
            self.broker,
            self.workspace,
            self.server,
            self.uri,
            self,
            self.reviewing.emit,
            guard_ms=self._guard_ms,
        )
        if manifest is None:
            set_plain(self.status, f"{message} The app does not run; Reload to review it again.")
        return manifest is not None

    async def _close_frame(self) -> None:
        frame, self.frame = self.frame, None
        if frame is not None:
            self.slot_layout.removeWidget(frame)
            await frame.aclose()

    async def aclose(self) -> None:
        await self.tasks.aclose()
        await self._close_frame()
        await self.apps.aclose()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.tasks.cancel()
        super().closeEvent(event)
