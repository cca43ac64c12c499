"""One off-the-record web profile per running app: its two pages, its interceptor, its settings.

An extension frame's ``SandboxProfile`` (``ui.host.profile``: off the record, the same engine
settings, downloads refused) with what the double iframe needs of its own: a scheme handler
that serves exactly two documents — the host page and the app's checked HTML — each with its
own Content-Security-Policy (``ui.host.scheme.security_headers``), the app's request policy
(``ui.apps.policy``), and the app's loader on its third origin (``ui.apps.loader``), which
hears of every http(s) request the policy refused.
"""

from __future__ import annotations

import resources
from broker.apps.loader import origin_of
from ui.apps.loader import AppLoader
from ui.apps.policy import APP_PATH, PAGE_PATH, AppHosts, app_csp, decide_request, page_csp
from ui.host.policy import RequestDecision
from ui.host.profile import SandboxProfile
from ui.host.scheme import LOADER_SCHEME, reply, security_headers
from ui.qt import QObject, QUrl, QWebEngineUrlRequestInfo, QWebEngineUrlRequestJob, QWebEngineUrlSchemeHandler

HTML = "text/html; charset=utf-8"


class AppSchemeHandler(QWebEngineUrlSchemeHandler):
    """Serves the host page on the page host and the app's HTML on the app host; nothing else."""

    def __init__(self, hosts: AppHosts, html: bytes, allowed: tuple[str, ...], parent: QObject | None = None):
        super().__init__(parent)
        self._hosts = hosts
        page = resources.path("apps", "host.html").read_text(encoding="utf-8")
        self._page = page.replace("%APP_URL%", hosts.app_url)
        self.scheme = "light"
        """Helm's colour scheme, the app frame's ``color-scheme`` (so its ``prefers-color-scheme``)
        when the host page is served; the relay keeps it current after that."""
        self._html = html
        self._page_headers = security_headers(page_csp(hosts), Cache_Control="no-store")
        self._app_headers = security_headers(app_csp(hosts, allowed), Cache_Control="no-store")

    def requestStarted(self, job: QWebEngineUrlRequestJob) -> None:
        url = job.requestUrl()
        host, path = url.host().lower(), url.path()
        if bytes(job.requestMethod().data()) != b"GET":
            job.fail(QWebEngineUrlRequestJob.Error.RequestDenied)
        elif host == self._hosts.page and path in ("", PAGE_PATH):
            page = self._page.replace("%SCHEME%", "dark" if self.scheme == "dark" else "light")
            reply(job, page.encode("utf-8"), HTML, self._page_headers)
        elif host == self._hosts.app and path == APP_PATH:
            reply(job, self._html, HTML, self._app_headers)
        else:
            job.fail(QWebEngineUrlRequestJob.Error.UrlNotFound)


class AppProfile(SandboxProfile):
    """The web profile of one app frame: nothing persisted, nothing granted; the interceptor
    puts every request either frame makes to the app's policy (its network, above all)."""

    def __init__(
        self,
        hosts: AppHosts,
        html: bytes,
        allowed: tuple[str, ...],
        loader: AppLoader,
        parent: QObject | None = None,
    ):
        self.hosts = hosts

        def decide(info: QWebEngineUrlRequestInfo) -> RequestDecision:
            url = info.requestUrl()
            kind = info.resourceType().name
            method = bytes(info.requestMethod().data()).decode("latin-1")
            whole = url.toString(QUrl.ComponentFormattingOption.FullyEncoded)
            decision = decide_request(
                url.scheme(), url.host(), url.port(), kind, hosts, allowed, whole, method
            )
            found = origin_of(whole)
            if not decision.allowed and found is not None:
                loader.refused(found, decision.reason)
            return decision

        self.pages = AppSchemeHandler(hosts, html, allowed)
        super().__init__(f"app {hosts.page}", self.pages, decide, parent)
        loader.handler.setParent(self)
        self.profile.installUrlSchemeHandler(LOADER_SCHEME.encode(), loader.handler)
