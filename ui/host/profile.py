"""One off-the-record web profile per extension: its scheme handler, interceptor and settings.

Every instance of an extension shares its profile (same origin, same in-memory storage);
nothing the profile holds is written to disk.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ui.host.policy import SCHEME, decide_request
from ui.host.scheme import ExtensionSchemeHandler
from ui.qt import (
    QObject,
    QWebEngineDownloadRequest,
    QWebEngineProfile,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    Signal,
)

log = logging.getLogger(__name__)

Attr = QWebEngineSettings.WebAttribute

# Decisions as data: the engine features an extension page gets (True) or not (False).
PAGE_SETTINGS: tuple[tuple[QWebEngineSettings.WebAttribute, bool], ...] = (
    (Attr.JavascriptEnabled, True),
    (Attr.LocalStorageEnabled, True),
    (Attr.LocalContentCanAccessRemoteUrls, False),
    (Attr.LocalContentCanAccessFileUrls, False),
    (Attr.JavascriptCanOpenWindows, False),
    (Attr.JavascriptCanAccessClipboard, False),
    (Attr.JavascriptCanPaste, False),
    (Attr.AllowWindowActivationFromJavaScript, False),
    (Attr.AllowRunningInsecureContent, False),
    (Attr.AllowGeolocationOnInsecureOrigins, False),
    (Attr.PluginsEnabled, False),
    (Attr.PdfViewerEnabled, False),
    (Attr.FullScreenSupportEnabled, False),
    (Attr.ScreenCaptureEnabled, False),
    (Attr.WebRTCPublicInterfacesOnly, True),
    (Attr.DnsPrefetchEnabled, False),
    (Attr.HyperlinkAuditingEnabled, False),
    (Attr.NavigateOnDropEnabled, False),
    (Attr.ErrorPageEnabled, False),
    (Attr.AutoLoadIconsForPage, False),
    (Attr.TouchIconsEnabled, False),
)


def harden(profile: QWebEngineProfile) -> None:
    """What every sandboxed frame's profile gets (extension frames and MCP Apps alike):
    nothing persisted, permissions never remembered, the engine features of ``PAGE_SETTINGS``."""
    profile.setHttpCacheType(QWebEngineProfile.HttpCacheType.MemoryHttpCache)
    profile.setPersistentCookiesPolicy(QWebEngineProfile.PersistentCookiesPolicy.NoPersistentCookies)
    profile.setPersistentPermissionsPolicy(QWebEngineProfile.PersistentPermissionsPolicy.AskEveryTime)
    profile.setSpellCheckEnabled(False)
    settings = profile.settings()
    for attribute, on in PAGE_SETTINGS:
        settings.setAttribute(attribute, on)


class OwnOriginInterceptor(QWebEngineUrlRequestInterceptor):
    """Blocks every request that is not for the extension's own origin (or local data)."""

    blocked = Signal(str)
    """Why a request was blocked (author mode shows it; the URL itself is not repeated)."""

    def __init__(self, host: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl()
        decision = decide_request(url.scheme(), url.host(), self._host)
        if not decision.allowed:
            log.info("blocked a request of extension %s: %s", self._host, decision.reason)
            info.block(True)
            self.blocked.emit(decision.reason)


class ExtensionProfile(QObject):
    """The web profile of one extension, serving files from ``root`` on origin ``host``."""

    def __init__(self, root: Path, host: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.root = root
        self.host = host
        # No storage name: off the record, nothing persisted. Python keeps the handler and
        # the interceptor alive: a collected one leaves loads hanging.
        self.profile = QWebEngineProfile(self)
        self.handler = ExtensionSchemeHandler(root, host, self)
        self.interceptor = OwnOriginInterceptor(host, self)
        self.profile.installUrlSchemeHandler(SCHEME.encode(), self.handler)
        self.profile.setUrlRequestInterceptor(self.interceptor)
        harden(self.profile)
        self.profile.downloadRequested.connect(self._refuse_download)

    def _refuse_download(self, download: QWebEngineDownloadRequest) -> None:
        log.info("refused a download from extension %s", self.host)
        download.cancel()
