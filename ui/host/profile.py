"""One off-the-record web profile per extension: its scheme handler, interceptor and settings.

Every instance of an extension shares its profile (same origin, same in-memory storage);
nothing the profile holds is written to disk. ``SandboxProfile`` is the part every sandboxed
frame shares — an MCP App's profile (``ui.apps.profile``) is one too, with its own two
documents and request policy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from ui.host.policy import SCHEME, RequestDecision, decide_request
from ui.host.scheme import ExtensionSchemeHandler
from ui.qt import (
    QObject,
    QUrl,
    QWebEngineDownloadRequest,
    QWebEngineProfile,
    QWebEngineSettings,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    QWebEngineUrlSchemeHandler,
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


Decide = Callable[[QWebEngineUrlRequestInfo], RequestDecision]
"""A frame's request policy: what it decides about one request (``ui.host.policy``)."""


class PolicyInterceptor(QWebEngineUrlRequestInterceptor):
    """Blocks every request its policy does not allow."""

    blocked = Signal(str)
    """Why a request was blocked (author mode shows it; the URL itself is not repeated)."""

    def __init__(self, label: str, decide: Decide, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._label, self._decide = label, decide

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        decision = self._decide(info)
        if not decision.allowed:
            log.info("blocked a request of %s: %s", self._label, decision.reason)
            info.block(True)
            self.blocked.emit(decision.reason)
        elif decision.redirect:
            info.redirect(QUrl(decision.redirect))


class SandboxProfile(QObject):
    """The web profile of one sandboxed frame — an extension's, or an MCP App's two frames:
    off the record, ``harden``ed, served by one scheme handler, every request put to one
    policy, every download refused. Subclasses say what is served and what may be loaded."""

    def __init__(
        self, label: str, handler: QWebEngineUrlSchemeHandler, decide: Decide, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.label = label
        # No storage name: off the record, nothing persisted. Python keeps the handler and
        # the interceptor alive: a collected one leaves loads hanging.
        self.profile = QWebEngineProfile(self)
        handler.setParent(self)
        self.interceptor = PolicyInterceptor(label, decide, self)
        self.profile.installUrlSchemeHandler(SCHEME.encode(), handler)
        self.profile.setUrlRequestInterceptor(self.interceptor)
        harden(self.profile)
        self.profile.downloadRequested.connect(self._refuse_download)

    def _refuse_download(self, download: QWebEngineDownloadRequest) -> None:
        log.info("refused a download from %s", self.label)
        download.cancel()


class ExtensionProfile(SandboxProfile):
    """The web profile of one extension, serving files from ``root`` on origin ``host``; every
    request but its own origin's (or local data) is blocked."""

    def __init__(self, root: Path, host: str, parent: QObject | None = None) -> None:
        self.root = root
        self.host = host
        self.handler = ExtensionSchemeHandler(root, host)

        def decide(info: QWebEngineUrlRequestInfo) -> RequestDecision:
            url = info.requestUrl()
            return decide_request(url.scheme(), url.host(), host)

        super().__init__(f"extension {host}", self.handler, decide, parent)
