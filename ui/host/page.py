"""The web page of one extension frame: it may show its own files and nothing else.

Navigation away, new windows, permission requests (camera, microphone, geolocation,
notifications, clipboard…), file pickers, full screen, protocol handlers and JavaScript
dialogs are all refused here. JavaScript dialogs matter most: an ``alert`` shown by Qt could be
dressed up to look like Helm's own write confirmation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ui.host.policy import RequestDecision, decide_navigation
from ui.qt import (
    QObject,
    QUrl,
    QWebEngineDesktopMediaRequest,
    QWebEngineFileSystemAccessRequest,
    QWebEngineFullScreenRequest,
    QWebEngineNewWindowRequest,
    QWebEnginePage,
    QWebEnginePermission,
    QWebEngineProfile,
    QWebEngineRegisterProtocolHandlerRequest,
    Signal,
)

log = logging.getLogger(__name__)

Navigation = Callable[[QUrl, bool], RequestDecision]
"""(the target, whether it is the main frame) → whether the page may go there."""


class HostPage(QWebEnginePage):
    """A page that stays where its navigation policy says (its extension's origin) and is
    granted nothing. An MCP App's host page is one too (``ui.apps.view``)."""

    console = Signal(int, str, int, str)
    """A console message of the page: level, message, line, source (for author mode)."""

    def __init__(
        self,
        profile: QWebEngineProfile,
        host: str,
        parent: QObject | None = None,
        *,
        navigation: Navigation | None = None,
    ) -> None:
        """``navigation``: where the page and its frames may go (by default: the main frame
        at ``host``, as ``ui.host.policy.decide_navigation`` says; an app's page has two)."""
        super().__init__(profile, parent)
        self._host = host
        self._navigation = navigation or (
            lambda url, main_frame: decide_navigation(url.scheme(), url.host(), host, main_frame)
        )
        self.permissionRequested.connect(self._deny_permission)
        self.newWindowRequested.connect(self._deny_window)
        self.fileSystemAccessRequested.connect(self._deny_file_system)
        self.fullScreenRequested.connect(self._deny_full_screen)
        self.registerProtocolHandlerRequested.connect(self._deny_protocol_handler)
        self.desktopMediaRequested.connect(self._deny_desktop_media)

    def acceptNavigationRequest(
        self, url: QUrl | str, _type: QWebEnginePage.NavigationType, is_main_frame: bool
    ) -> bool:
        decision = self._navigation(QUrl(url), is_main_frame)
        if not decision.allowed:
            log.info("refused a navigation of %s: %s", self._host, decision.reason)
        return decision.allowed

    def createWindow(  # type: ignore[override]  # None is how Qt is told: no window
        self, _type: QWebEnginePage.WebWindowType
    ) -> QWebEnginePage | None:
        return None

    def chooseFiles(
        self, _mode: QWebEnginePage.FileSelectionMode, _old: Sequence[str], _types: Sequence[str]
    ) -> list[str]:
        return []

    def javaScriptAlert(self, _origin: QUrl | str, _msg: str) -> None:
        return None

    def javaScriptConfirm(self, _origin: QUrl | str, _msg: str) -> bool:
        return False

    def javaScriptPrompt(self, _origin: QUrl | str, _msg: str, _default: str) -> tuple[bool, str]:
        return False, ""

    def javaScriptConsoleMessage(
        self, level: QWebEnginePage.JavaScriptConsoleMessageLevel, message: str, line: int, source: str
    ) -> None:
        self.console.emit(level.value, message, line, source)

    def _deny_permission(self, permission: QWebEnginePermission) -> None:
        log.info("denied %s to extension %s", permission.permissionType().name, self._host)
        permission.deny()

    def _deny_window(self, request: QWebEngineNewWindowRequest) -> None:
        log.info("refused a new window of extension %s", self._host)

    def _deny_file_system(self, request: QWebEngineFileSystemAccessRequest) -> None:
        request.reject()

    def _deny_full_screen(self, request: QWebEngineFullScreenRequest) -> None:
        request.reject()

    def _deny_protocol_handler(self, request: QWebEngineRegisterProtocolHandlerRequest) -> None:
        request.reject()

    def _deny_desktop_media(self, request: QWebEngineDesktopMediaRequest) -> None:
        request.cancel()
