"""``AppFrame``: where an app sits on the dashboard — opening it, refusing it, full screen.

Opening checks the app against its server first (``broker.apps.verify``). Then Helm calls the
tool that opens the app with the app's settings as its arguments (``broker.apps.launch``) and
tells the app its input and result; Refresh calls it again. An app whose opening tool needs a
setting the user has not given shows that first (``settingsNeeded``: the card opens its
settings form), not a blank app. What Helm refused the app that the user should know (the
opening call declined, a chat message) is shown on a line above the app. A changed app shows
what changed instead of running, and a Review… button (``reviewAsked``: the window shows the
app's review, and makes a new frame after it). Full screen moves the app's view into a
frameless full-screen window of its own (Esc, or the app, brings it back). A confirmation —
this app's write or link, or any other question Helm asks (``ui.dialogs.stacking``) — brings
the app back inline before it appears, above every Helm window, and the app's requests for full
screen are refused while one is open: a full-screen app can never hide a question or take the
keys typed to answer it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from broker.apps.errors import AppChanged, AppError
from broker.context import CallContext
from broker.errors import CallError, HelmError
from broker.summary import WriteSummary
from ui.apps.view import AppServices, AppView
from ui.dialogs.confirm import ConfirmDialog, ConfirmDialogFactory, DialogConfirmer
from ui.dialogs.stacking import Confirmations
from ui.host.egress_check import ENGINE_CHECK
from ui.qt import (
    QHBoxLayout,
    QKeySequence,
    QPushButton,
    QShortcut,
    QSize,
    Qt,
    QVBoxLayout,
    QWebEngineScript,
    QWidget,
    Signal,
)
from ui.text import plain_label, set_plain
from ui.theme import set_tone

if TYPE_CHECKING:
    from broker.apps.verify import OpenedApp

log = logging.getLogger(__name__)
WEBGL_MARK = b"webgl"
WEBGL_PROBE = (
    "(() => { try { return !!document.createElement('canvas').getContext('webgl'); }"
    " catch (e) { return false; } })()"
)
NO_WEBGL = (
    "This app draws with WebGL, which Helm's web engine cannot offer on this machine (no graphics "
    "acceleration): it may show an error instead of its drawing."
)
SHOWN_ORIGINS = 3
"""The origins of blocked loads a card names (Activity has every one)."""
MAX_REPORTED = 4096
"""The largest width or height an app's reported size may ask for, in pixels."""


class OnTop:
    """A confirmation dialog factory: the app goes back inline, and the dialog belongs to the
    window the frame is in (the dialog keeps itself above every Helm window)."""

    def __init__(self, frame: AppFrame, factory: ConfirmDialogFactory) -> None:
        self._frame, self._factory = frame, factory

    def __call__(
        self, summary: WriteSummary, parent: QWidget | None, *, remaining: float | None
    ) -> ConfirmDialog:
        return self._factory(summary, self._frame.dialog_parent(), remaining=remaining)


class FullScreen(QWidget):
    """The window a full-screen app lives in; Esc asks to go back inline."""

    def __init__(self, title: str, back: Callable[[], None]) -> None:
        super().__init__(None, Qt.WindowType.Window | Qt.WindowType.FramelessWindowHint)
        self.setWindowTitle(title)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self, back)


class AppFrame(QWidget):
    ready = Signal(object)
    """The app's view, once its page loaded and its bridge connected."""

    reviewAsked = Signal()
    """The user clicked Review… on an app that changed since its approval."""

    settingsNeeded = Signal()
    """The opening tool needs settings the user has not given: the card shows its form."""

    launched = Signal(object)
    """The opening tool's envelope, each time it ran (at opening and on Refresh)."""

    sizeReported = Signal(object)
    """The size the app reports (``QSize``; a side it left out is -1)."""

    told = Signal(str)
    """What the line above the app now says (``tell``)."""

    def __init__(
        self,
        services: AppServices,
        ctx: CallContext,
        dialogs: ConfirmDialogFactory,
        own: Callable[[Any], asyncio.Task[Any]],
        parent: QWidget | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx, self._services, self._own = ctx, services, own
        self.settings = settings
        self.arguments: dict[str, Any] = {}
        """The opening tool's arguments, from the settings."""
        self.launching: asyncio.Task[Any] | None = None
        self.reported = QSize(-1, -1)
        self.confirm = DialogConfirmer(None, factory=OnTop(self, dialogs))
        self.view: AppView | None = None
        self.full: FullScreen | None = None
        self.col = QVBoxLayout(self)
        self.col.setContentsMargins(0, 0, 0, 0)
        self.notice = plain_label("Opening the app…", self)
        self.notice.setObjectName("notice")
        self.col.addWidget(self.notice)
        self.review_button = QPushButton("Review…", self)
        self.review_button.setToolTip("Review what changed, and approve the app again to open it")
        self.review_button.clicked.connect(self._ask_review)
        self.review_button.hide()
        self.col.addWidget(self.review_button, 0, Qt.AlignmentFlag.AlignLeft)
        bar = QHBoxLayout()
        self.said = plain_label("", self)
        self.said.setObjectName("said")
        self.said.hide()
        bar.addWidget(self.said, 1)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setToolTip("Call the app's tool again and show its result")
        self.refresh_button.clicked.connect(self.refresh)
        self.refresh_button.hide()
        bar.addWidget(self.refresh_button, 0, Qt.AlignmentFlag.AlignRight)
        self.col.addLayout(bar)
        self.opening = own(self._open())
        # Disconnected by Qt when the frame is destroyed (the slot is the frame's own).
        Confirmations.of().opened.connect(self._confirmation_opened)

    async def _open(self) -> None:
        check = await ENGINE_CHECK.result()  # no frame loads before the start-up check passed
        if not check.passed:
            set_plain(self.notice, check.message)
            return
        try:
            from broker.apps.verify import open_app  # the MCP SDK, once an app frame opens

            opened = await open_app(self._services.broker, self.ctx.workspace, self.ctx.extension)
        except AppChanged as err:
            set_plain(self.notice, f"{err}\n" + "\n".join(f"• {c}" for c in err.changes))
            self.review_button.show()
            return
        except CallError as err:
            set_plain(self.notice, f"The app cannot open: {err.code.value}: {err.message}")
            return
        except (AppError, HelmError) as err:
            set_plain(self.notice, f"The app cannot open: {err}")
            return
        if not self._arguments(opened):
            return
        self.view = AppView(opened, self.ctx, self._services, self.confirm, self)
        self.view.switch_mode = self.set_mode
        self.view.stopped.connect(self._stopped)
        self.view.ready.connect(lambda: self.ready.emit(self.view))
        if WEBGL_MARK in opened.html.lower():  # an app that draws with WebGL: say if it cannot
            self.view.ready.connect(self._check_webgl)
        self.view.session.notices = self.tell
        self.view.loader.blocked.connect(self._blocked)
        self.view.session.sized = self._sized
        self.notice.hide()
        self.col.addWidget(self.view, 1)
        self.refresh_button.show()
        self.view.load()
        self._launch_now(self.view)

    def _arguments(self, opened: OpenedApp) -> bool:
        """The opening tool's arguments from the settings; False (and the settings asked
        for) when a required one is empty."""
        from broker.apps import launch

        self.arguments = launch.arguments(opened.settings_form, self.settings or {})
        empty = launch.missing(opened.settings_form, self.arguments)
        if empty:
            names = ", ".join(str(opened.settings_form[k].get("label") or k) for k in empty)
            set_plain(
                self.notice, f"{opened.name} needs its settings first: {names}. Fill them in, then Apply."
            )
            self.settingsNeeded.emit()
            return False
        if opened.unset:
            tool = opened.spec.opener
            self.tell(
                f"Helm does not call {tool} when the app opens: it needs "
                + "; ".join(f"{u.name} ({u.why})" for u in opened.unset)
            )
        return True

    def refresh(self) -> None:
        """Call the opening tool again (an app without one: load the app again)."""
        view = self.view
        if view is None:
            return
        if not self._launch_now(view):
            view.load()

    def _launch_now(self, view: AppView) -> bool:
        """Start the opening tool's call, unless one is running; False if there is no tool."""
        tool = view.opened.spec.opener
        if not tool or view.opened.unset:
            return False
        if self.launching is None or self.launching.done():  # one call at a time
            self.launching = self._own(self._launch(view, tool))
        return True

    async def _launch(self, view: AppView, tool: str) -> None:
        from broker.apps import launch

        envelope = await launch.run(view.session, tool, self.arguments)
        if not envelope.get("ok") and (envelope.get("error") or {}).get("code") != "tool_error":
            error = envelope.get("error") or {}
            self.tell(f"Helm did not call {tool}: {error.get('code')}: {error.get('message')}")
        self.launched.emit(envelope)

    def _check_webgl(self) -> None:
        """Whether the engine offers WebGL, asked in Helm's own world of the host page."""
        if self.view is not None:
            self.view.page.runJavaScript(
                WEBGL_PROBE,
                QWebEngineScript.ScriptWorldId.ApplicationWorld.value,
                lambda found: None if found is True else self.tell(NO_WEBGL),
            )

    def _blocked(self, line: str) -> None:
        """A load Helm blocked: the card names it, or the origins of all of them so far."""
        noted = self.view.loader.noted if self.view is not None else []
        origins = list(dict.fromkeys(origin for origin, _why in noted))
        if len(noted) <= 1:
            self.tell(f"Helm blocked a load from {line}")
            return
        shown = ", ".join(origins[:SHOWN_ORIGINS])
        more = f" and {len(origins) - SHOWN_ORIGINS} more" if len(origins) > SHOWN_ORIGINS else ""
        self.tell(f"Helm blocked {len(noted)} loads, from {shown}{more} (Activity says why)")

    def tell(self, text: str) -> None:
        """Show what Helm refused the app, on the line above it."""
        set_plain(self.said, text)
        set_tone(self.said, "warning")
        self.said.show()
        self.told.emit(text)

    def _sized(self, width: int | None, height: int | None) -> None:
        self.reported = QSize(
            min(width, MAX_REPORTED) if width is not None else self.reported.width(),
            min(height, MAX_REPORTED) if height is not None else self.reported.height(),
        )
        self.updateGeometry()
        self.sizeReported.emit(self.reported)

    def sizeHint(self) -> QSize:
        """The size the app reported, where it did (a card or the author's window uses it)."""
        hint = super().sizeHint()
        width = self.reported.width() if self.reported.width() > 0 else hint.width()
        height = self.reported.height() if self.reported.height() > 0 else hint.height()
        return QSize(width, height)

    def _ask_review(self) -> None:
        self.review_button.setEnabled(False)  # one review at a time: a new frame follows it
        self.reviewAsked.emit()

    def _stopped(self, why: str) -> None:
        self.set_mode("inline")
        set_plain(self.notice, why)
        self.notice.show()

    def dialog_parent(self) -> QWidget:
        """The window a question about this app belongs to: the frame's, with the app inline."""
        self.back_inline()
        return self.window()

    def _confirmation_opened(self, _dialog: object) -> None:
        self.back_inline()

    def set_mode(self, mode: str) -> str:
        """Inline or full screen (refused while a confirmation is open); the mode now in force."""
        view = self.view
        if view is None:
            return "inline"
        if mode == "fullscreen" and self.full is None and not Confirmations.of().any_open:
            self.full = FullScreen(view.opened.name, self.back_inline)
            self.col.removeWidget(view)
            self.full.layout_.addWidget(view)
            self.full.showFullScreen()
            return "fullscreen"
        if mode == "inline" and self.full is not None:
            full, self.full = self.full, None
            full.layout_.removeWidget(view)
            self.col.addWidget(view, 1)
            full.close()
            full.deleteLater()
        return "fullscreen" if self.full is not None else "inline"

    def back_inline(self) -> None:
        """Back inline (the user pressed Esc, or a question is opening): tell the app."""
        if self.view is not None and self.full is not None:
            self.view.mode = self.set_mode("inline")
            self.view.session.notify_context({"displayMode": self.view.mode})

    async def aclose(self) -> None:
        self.opening.cancel()
        if self.launching is not None:
            self.launching.cancel()
        if self.view is not None:
            self.set_mode("inline")
            await self.view.aclose()
            self.view = None
        self.deleteLater()
