"""``helm dev --devtools``: Chromium DevTools on the extension's page, in a window of its own.

QtWebEngine's own DevTools page, inside Helm's process: no remote-debugging port is opened, so
nothing else on the machine can attach. DevTools inspects the page; it changes none of the
page's rules — the Content-Security-Policy, the blocked network, the bridge and everything
behind ``helm.call`` stay exactly as without it. The DevTools frontend gets an off-the-record
profile of its own whose requests may only reach its bundled files (``devtools:``, ``data:``,
``blob:``); the engine's network is closed for it as for every page (``ui.host.egress``).
"""

from __future__ import annotations

import logging

from ui.qt import (
    QMainWindow,
    QObject,
    QWebEnginePage,
    QWebEngineProfile,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    QWebEngineView,
)

log = logging.getLogger(__name__)

DEVTOOLS_SCHEMES = frozenset({"devtools", "data", "blob"})


class DevToolsOnly(QWebEngineUrlRequestInterceptor):
    """The DevTools frontend loads its bundled files; any other request is blocked."""

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        if info.requestUrl().scheme() not in DEVTOOLS_SCHEMES:
            log.info("blocked a DevTools request to a %s: URL", info.requestUrl().scheme())
            info.block(True)


class DevTools(QObject):
    """A window with DevTools for whichever page ``inspect`` was last given."""

    def __init__(self, title: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Python keeps the interceptor alive: a collected one leaves loads hanging.
        self.profile = QWebEngineProfile(self)
        self.interceptor = DevToolsOnly(self)
        self.profile.setUrlRequestInterceptor(self.interceptor)
        self.window = QMainWindow()
        self.window.setWindowTitle(title)
        self.window.resize(1000, 700)
        self.view = QWebEngineView(self.profile, self.window)
        self.window.setCentralWidget(self.view)

    @property
    def page(self) -> QWebEnginePage:
        return self.view.page()

    def inspect(self, page: QWebEnginePage | None) -> None:
        self.page.setInspectedPage(page)  # type: ignore[arg-type]  # None detaches
        if page is not None and not self.window.isVisible():
            self.window.show()

    def close(self) -> None:
        self.page.setInspectedPage(None)  # type: ignore[arg-type]
        self.window.close()
        self.window.deleteLater()
