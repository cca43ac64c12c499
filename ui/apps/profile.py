"""One off-the-record web profile per running app: its two pages, its interceptor, its settings.

A thin Qt adapter around ``ui.apps.policy``: the scheme handler serves exactly two documents —
the host page and the app's checked HTML — each with its own Content-Security-Policy, and the
interceptor asks the policy about every request either frame makes. The engine settings are
the extension frames' (``ui.host.profile.PAGE_SETTINGS``).
"""

from __future__ import annotations

import logging

import resources
from ui.apps.policy import APP_PATH, PAGE_PATH, AppHosts, app_csp, decide_request, page_csp
from ui.host.policy import SCHEME
from ui.host.profile import harden
from ui.qt import (
    QBuffer,
    QByteArray,
    QIODevice,
    QObject,
    QWebEngineDownloadRequest,
    QWebEngineProfile,
    QWebEngineUrlRequestInfo,
    QWebEngineUrlRequestInterceptor,
    QWebEngineUrlRequestJob,
    QWebEngineUrlSchemeHandler,
    Signal,
)

log = logging.getLogger(__name__)

HTML = b"text/html; charset=utf-8"


def _headers(csp: str) -> dict[bytes, list[bytes]]:
    # The binding takes a list per header; a plain value garbles it and the policy is lost.
    return {
        b"Content-Security-Policy": [csp.encode()],
        b"X-Content-Type-Options": [b"nosniff"],
        b"Referrer-Policy": [b"no-referrer"],
        b"Cache-Control": [b"no-store"],
    }


class AppSchemeHandler(QWebEngineUrlSchemeHandler):
    """Serves the host page on the page host and the app's HTML on the app host; nothing else."""

    def __init__(self, hosts: AppHosts, html: bytes, allowed: tuple[str, ...], parent: QObject | None = None):
        super().__init__(parent)
        self._hosts = hosts
        page = resources.path("apps", "host.html").read_text(encoding="utf-8")
        self._page = page.replace("%APP_URL%", hosts.app_url).encode("utf-8")
        self._html = html
        self._page_headers = _headers(page_csp(hosts))
        self._app_headers = _headers(app_csp(hosts, allowed))

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        url = job.requestUrl()
        host, path = url.host().lower(), url.path()
        if bytes(job.requestMethod().data()) != b"GET":
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
        elif host == self._hosts.page and path in ("", PAGE_PATH):
            self._reply(job, self._page, self._page_headers)
        elif host == self._hosts.app and path == APP_PATH:
            self._reply(job, self._html, self._app_headers)
        else:
            job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)

    def _reply(self, job: QWebEngineUrlRequestJob, data: bytes, headers: dict[bytes, list[bytes]]) -> None:
        job.setAdditionalResponseHeaders(headers)  # type: ignore[arg-type]
        buffer = QBuffer(job)
        buffer.setData(QByteArray(data))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        job.reply(HTML, buffer)


class AppInterceptor(QWebEngineUrlRequestInterceptor):
    """Blocks every request the policy does not allow (the app's network, above all)."""

    blocked = Signal(str)

    def __init__(self, hosts: AppHosts, allowed: tuple[str, ...], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._hosts = hosts
        self._allowed = allowed

    def interceptRequest(self, info: QWebEngineUrlRequestInfo) -> None:
        url = info.requestUrl()
        kind = info.resourceType().name
        decision = decide_request(url.scheme(), url.host(), url.port(), kind, self._hosts, self._allowed)
        if not decision.allowed:
            log.info("blocked a request of app %s: %s", self._hosts.page, decision.reason)
            info.block(True)
            self.blocked.emit(decision.reason)


class AppProfile(QObject):
    """The web profile of one app frame: nothing persisted, nothing granted."""

    def __init__(self, hosts: AppHosts, html: bytes, allowed: tuple[str, ...], parent: QObject | None = None):
        super().__init__(parent)
        self.hosts = hosts
        # Python keeps the handler and the interceptor alive: a collected one leaves loads hanging.
        self.profile = QWebEngineProfile(self)
        self.handler = AppSchemeHandler(hosts, html, allowed, self)
        self.interceptor = AppInterceptor(hosts, allowed, self)
        self.profile.installUrlSchemeHandler(SCHEME.encode(), self.handler)
        self.profile.setUrlRequestInterceptor(self.interceptor)
        harden(self.profile)
        self.profile.downloadRequested.connect(self._refuse_download)

    def _refuse_download(self, download: QWebEngineDownloadRequest) -> None:
        log.info("refused a download from app %s", self.hosts.page)
        download.cancel()
