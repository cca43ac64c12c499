"""Where an app's two frames live and what each may load: pure decisions, no Qt.

The double-iframe pattern of MCP Apps, on Helm's own scheme: the *host page*
(``helm-ext://<page host>/``) is Helm's, carries Helm's isolated-world bridge and no script of
its own; it holds one ``<iframe sandbox="allow-scripts">`` loading the app's HTML from a second
host (``helm-ext://<app host>/app.html``). Without ``allow-same-origin`` the app runs in an
opaque origin: it can reach neither the host page nor any storage, and talks to Helm only by
``postMessage`` to its parent, which the host page relays to the bridge.

The app's Content-Security-Policy is Helm's: no network (``connect-src 'none'``) whatever the
resource declares, no frames, no workers, no forms; inline scripts and styles (an app is one
HTML document, and eval and data:/blob: scripts, which reach nothing an inline script could
not); and the declared resource domains only where the user allowed them at review.

An allowed domain's images, fonts, styles, scripts and media come through Helm's loader: the
request filter sends such a GET to the app's third origin, ``helm-load://<loader host>/``, whose
path holds the URL (``loader_url``), and Helm fetches it (``broker.apps.loader``). So the policy
names each allowed origin and the loader's (the engine checks a redirect's target as well), and
sends its violation reports to the loader (``REPORT_PATH``), which tells the card and Activity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from broker.apps.loader import allowed_origin, allowed_sources
from ui.host.policy import SCHEME, RequestDecision, extension_host, origin
from ui.host.scheme import LOADER_SCHEME

PAGE_PATH = "/"
APP_PATH = "/app.html"
REPORT_PATH = "/csp-report"
"""Where the app's policy sends its violation reports, on the loader's origin."""
CSP_REPORT = "ResourceTypeCspReport"
# Resource types an allowed resource domain may serve (QWebEngineUrlRequestInfo names).
RESOURCE_TYPES = frozenset(
    {"ResourceTypeImage", "ResourceTypeFontResource", "ResourceTypeStylesheet", "ResourceTypeScript",
     "ResourceTypeMedia"}
)  # fmt: skip


@dataclass(frozen=True)
class AppHosts:
    """The two origins of one app in one workspace."""

    page: str
    app: str
    loader: str

    @property
    def page_url(self) -> str:
        return origin(self.page) + PAGE_PATH

    @property
    def app_url(self) -> str:
        return origin(self.app) + APP_PATH

    @property
    def loader_origin(self) -> str:
        return f"{LOADER_SCHEME}://{self.loader}"


def loader_url(hosts: AppHosts, url: str) -> str:
    """Where the loader serves ``url``: ``helm-load://<loader>/<scheme>/<host[:port]>/<path>``,
    so a URL relative to a stylesheet the loader served resolves to the loader again."""
    scheme, _, rest = url.partition("://")
    return f"{hosts.loader_origin}/{scheme}/{quote(rest, safe=_URL_SAFE)}"


def loaded_url(path_and_query: str) -> str | None:
    """The URL a path of the loader's origin stands for (``loader_url``); None for another path."""
    scheme, _, rest = path_and_query.lstrip("/").partition("/")
    return f"{scheme}://{rest}" if scheme in ("http", "https") and rest else None


_URL_SAFE = "/:?&=%#;,+@!$'()*[]~-._"


def app_hosts(workspace: str, ext_id: str) -> AppHosts:
    page = extension_host(workspace, ext_id)
    app = hashlib.sha256(f"{workspace}\x00{ext_id}\x00app".encode()).hexdigest()[:32]
    loader = hashlib.sha256(f"{workspace}\x00{ext_id}\x00loader".encode()).hexdigest()[:32]
    return AppHosts(page, app, loader)


def page_csp(hosts: AppHosts) -> str:
    """The host page: no script of its own, one frame — the app's."""
    return "; ".join(
        (
            "default-src 'none'",
            "style-src 'unsafe-inline'",
            f"frame-src {origin(hosts.app)}",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


def app_csp(hosts: AppHosts, allowed: Iterable[str]) -> str:
    """The app's document: the spec's restrictive default, with no network at all, plus the
    resource domains the user allowed (and the loader that serves them), reports to the loader."""
    sources = allowed_sources(allowed)
    extra = " ".join((*sources, hosts.loader_origin) if sources else ())

    def with_extra(base: str) -> str:
        return f"{base} {extra}".strip()

    return "; ".join(
        (
            "default-src 'none'",
            # The app is untrusted code by design, alone in an opaque origin with no network:
            # eval and data:/blob: scripts (a bundler's worker fallback) give it nothing more.
            with_extra("script-src 'unsafe-inline' 'unsafe-eval' data: blob:"),
            with_extra("style-src 'unsafe-inline'"),
            with_extra("img-src data: blob:"),
            with_extra("font-src data:"),
            with_extra("media-src data: blob:"),
            "connect-src 'none'",
            "frame-src 'none'",
            "child-src 'none'",
            # No worker either: a blob:/data: worker inherits this policy, and its importScripts
            # of an allowed domain would go to the loader like the page's script (the request
            # filter cannot tell them apart); an opaque origin refuses every other kind.
            "worker-src 'none'",
            "object-src 'none'",
            "manifest-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            f"frame-ancestors {origin(hosts.page)}",
            f"report-uri {hosts.loader_origin}{REPORT_PATH}",
        )
    )


def decide_request(
    scheme: str,
    host: str,
    port: int,
    resource_type: str,
    hosts: AppHosts,
    allowed: Iterable[str],
    url: str = "",
    method: str = "GET",
) -> RequestDecision:
    """Whether either frame of the app may load ``scheme://host:port`` (``url`` whole): a GET of
    an image, font, style, script or media of a domain the user allowed goes to the loader."""
    scheme, host = scheme.lower(), host.lower()
    if scheme == SCHEME:
        if host in (hosts.page, hosts.app):
            return RequestDecision(True, "the app's own origins")
        return RequestDecision(False, "another frame's origin")
    if scheme == LOADER_SCHEME:
        if host != hosts.loader:
            return RequestDecision(False, "another app's loader")
        # The loader answers what the filter sends it, and the engine's reports: nothing else of
        # the page's (a fetch, a worker's script) reaches it, whatever the policy says.
        if resource_type == CSP_REPORT and method.upper() == "POST" and urlsplit(url).path == REPORT_PATH:
            return RequestDecision(True, "the engine's report of a blocked load")
        if resource_type in RESOURCE_TYPES and method.upper() == "GET":
            return RequestDecision(True, "Helm's loader")
        return RequestDecision(False, "Helm's loader serves images, fonts, styles, scripts and media only")
    if scheme in ("data", "blob"):
        return RequestDecision(True, "local data")
    if scheme in ("https", "http"):
        target = url or _shown(scheme, host, port) + "/"
        found = allowed_origin(target, allowed)
        if found is None:
            return RequestDecision(False, "not a resource domain allowed for this app")
        if resource_type not in RESOURCE_TYPES:
            return RequestDecision(False, "allowed for images, fonts, styles, scripts and media only")
        if method.upper() != "GET":
            return RequestDecision(False, f"allowed for GET only, not {method.upper()[:10]!r}")
        return RequestDecision(True, "a resource domain the user allowed", redirect=loader_url(hosts, target))
    return RequestDecision(False, f"{scheme or 'relative'} requests leave the sandbox")


def _shown(scheme: str, host: str, port: int) -> str:
    return f"{scheme}://{host}" + (f":{port}" if port > 0 else "")


def decide_navigation(
    scheme: str, host: str, path: str, main_frame: bool, hosts: AppHosts
) -> RequestDecision:
    """The main frame stays on the host page; the one subframe loads the app and nothing else."""
    if scheme.lower() != SCHEME:
        return RequestDecision(False, "navigation away from the app")
    if main_frame and host.lower() == hosts.page and path in ("", PAGE_PATH):
        return RequestDecision(True, "the host page")
    if not main_frame and host.lower() == hosts.app and path == APP_PATH:
        return RequestDecision(True, "the app")
    return RequestDecision(False, "navigation away from the app")
