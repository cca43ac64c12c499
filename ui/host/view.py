"""``ExtensionView``: one running extension frame, the widget the main window embeds.

It ties together the extension's profile, a page that stays home, the page-side ``helm``
scripts, Helm's look (CSS variables that follow the theme, ``ui.theme``) and a bridge whose
identity is fixed here. The instance id is given by the caller and
kept across reloads, so the broker's rate limit for the frame survives a reload. Nothing of the
extension loads before the process's start-up check (``egress_check``) passed: a frame started
while the check runs gets its process and its navigation under way, and the profile's file
server holds the extension's files until the verdict. If the check failed, the frame shows why
instead of the extension.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from broker.context import CallContext
from broker.summary import Confirmer
from ui.aio import OwnedTasks
from ui.host.bridge import Bridge, CallHandler
from ui.host.egress_check import ENGINE_CHECK, EgressCheck
from ui.host.frame import WebStack
from ui.host.page import HostPage
from ui.host.policy import decide_navigation, entry_url
from ui.host.profile import ExtensionProfile
from ui.host.shim import bridge_scripts, set_theme, theme_script
from ui.qt import (
    QLabel,
    Qt,
    QUrl,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.theme import Theme
from ui.theme_data import Look

log = logging.getLogger(__name__)

BRIDGE_OBJECT = "helm"
LEFT_HOME = "Helm stopped this extension: its page tried to leave its own files."


class ExtensionView(QWidget):
    """A sandboxed web frame showing one extension instance."""

    ready = Signal()
    """The page loaded and its ``window.helm`` is connected (after every load or reload)."""

    loadFailed = Signal()

    def __init__(
        self,
        profile: ExtensionProfile,
        entry: str,
        ctx: CallContext,
        handler: CallHandler,
        confirm: Confirmer,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.entry = entry
        self._profile = profile
        self._theme = Theme.of()
        self.bridge = Bridge(handler, ctx, confirm, self)
        self.stack = WebStack(
            self,
            lambda parent: HostPage(profile.profile, profile.host, parent),
            (*bridge_scripts(), theme_script(self._theme.look)),
            (BRIDGE_OBJECT, self.bridge),
            ctx.extension,
        )
        self.web, self.page, self.channel = self.stack.web, self.stack.page, self.stack.channel
        self._theme.changed.connect(self._look_changed)
        self._loaded = self._connected = self._left_home = self._refused = False
        self.bridge.pageReady.connect(self._bridge_connected)
        self.page.loadStarted.connect(self._load_started)
        self.page.loadFinished.connect(self._load_finished)
        self.page.urlChanged.connect(self._url_changed)
        self.refusal = QLabel(self)
        self.refusal.setTextFormat(Qt.TextFormat.PlainText)
        self.refusal.setWordWrap(True)
        self.refusal.hide()
        self._tasks = OwnedTasks(self)
        self._waiting: asyncio.Task[None] | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.web)
        layout.addWidget(self.refusal)

    def _look_changed(self, look: Look) -> None:
        set_theme(self.page, look)

    @property
    def url(self) -> str:
        return entry_url(self._profile.host, self.entry)

    def load(self, fragment: str = "") -> None:
        """Load the entry file; ``fragment`` (after ``#``) is for the page alone to read."""
        url = QUrl(self.url)
        if fragment:
            url.setFragment(fragment)
        self._once_checked(lambda: self.page.load(url))

    def reload(self) -> None:
        self._once_checked(self._reload_now)

    def _reload_now(self) -> None:
        if self._left_home:  # a stopped page starts again at home, not where it went
            self._left_home = False
            self.page.load(QUrl(self.url))
        else:
            self.page.triggerAction(self.page.WebAction.ReloadAndBypassCache)

    def _once_checked(self, go: Callable[[], None]) -> None:
        outcome = ENGINE_CHECK.outcome
        if outcome is not None:
            self._go_if_passed(outcome, go)
            return
        # Undecided: start now, with the extension's files held until the verdict.
        self._profile.handler.hold_until(ENGINE_CHECK)
        go()
        if self._waiting is None:
            self._waiting = self._tasks.start(self._after_check())

    async def _after_check(self) -> None:
        outcome = await ENGINE_CHECK.result()
        self._waiting = None
        if outcome.passed:
            self._go_if_passed(outcome, lambda: None)
        elif not self._refused:  # the refused files may have ended the load first
            self._refuse(outcome)
            self.loadFailed.emit()

    def _go_if_passed(self, outcome: EgressCheck, go: Callable[[], None]) -> None:
        if outcome.passed:
            ENGINE_CHECK.watch(self)
            self.refusal.hide()
            self.web.show()
            go()
            return
        self._refuse(outcome)
        self.loadFailed.emit()

    def _refuse(self, outcome: EgressCheck) -> None:
        log.error("frame of %s not loaded: %s", self.ctx.extension, outcome.message)
        self._refused = True
        self.page.triggerAction(self.page.WebAction.Stop)
        self._show_refusal(outcome.message)

    def engine_check_failed(self, outcome: EgressCheck) -> None:
        """The start-up check failed late: cut the page off from Helm and stop it."""
        log.error("frame of %s stopped: %s", self.ctx.extension, outcome.message)
        self.bridge.close()
        self.stack.stop()
        self._show_refusal(outcome.message)

    def _url_changed(self, url: QUrl) -> None:
        # The page's own guard cancels every navigation away and the page asks Helm about the
        # rest; should a document from elsewhere still arrive, it is stopped and hidden.
        if url.isEmpty() or self._at_home(url):
            return
        log.warning("frame of %s left its own origin; stopped", self.ctx.extension)
        self._left_home = True
        self.page.triggerAction(self.page.WebAction.Stop)
        self._show_refusal(LEFT_HOME)

    def _show_refusal(self, message: str) -> None:
        self.refusal.setText(message)
        self.web.hide()
        self.refusal.show()

    def _load_started(self) -> None:
        self._loaded = self._connected = False

    def _bridge_connected(self) -> None:
        self._connected = True
        self._maybe_ready()

    def _load_finished(self, ok: bool) -> None:
        if not ok:
            if self._refused:  # the refusal for the check has said so already
                return
            outcome = ENGINE_CHECK.outcome
            if outcome is not None and not outcome.passed:  # its files were refused
                self._refuse(outcome)
            self.loadFailed.emit()
            return
        self._loaded = True
        self._maybe_ready()

    def _maybe_ready(self) -> None:
        if self._loaded and self._connected and self._at_home(self.page.url()):
            self.ready.emit()

    def _at_home(self, url: QUrl) -> bool:
        return decide_navigation(url.scheme(), url.host(), self._profile.host, True).allowed

    async def aclose(self) -> None:
        """Stop the frame: cancel its calls, then let Qt delete the page and the widget."""
        ENGINE_CHECK.unwatch(self)
        with contextlib.suppress(RuntimeError):  # already disconnected
            self._theme.changed.disconnect(self._look_changed)
        self._tasks.cancel()
        await self.bridge.aclose()
        self.stack.release()
        self.deleteLater()
