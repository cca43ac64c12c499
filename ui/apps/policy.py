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
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from broker.apps import meta
from ui.host.policy import SCHEME, RequestDecision, extension_host, origin

PAGE_PATH = "/"
APP_PATH = "/app.html"
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

    @property
    def page_url(self) -> str:
        return origin(self.page) + PAGE_PATH

    @property
    def app_url(self) -> str:
        return origin(self.app) + APP_PATH


def app_hosts(workspace: str, ext_id: str) -> AppHosts:
    page = extension_host(workspace, ext_id)
    app = hashlib.sha256(f"{workspace}\x00{ext_id}\x00app".encode()).hexdigest()[:32]
    return AppHosts(page, app)


def allowed_sources(domains: Iterable[str]) -> tuple[str, ...]:
    """The allowed resource domains that are plain origins (anything else stays blocked)."""
    return tuple(sorted({o for d in domains if (o := meta.origin(d)) is not None}))


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
    resource domains the user allowed."""
    extra = " ".join(allowed_sources(allowed))

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
            "worker-src 'none'",
            "object-src 'none'",
            "manifest-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            f"frame-ancestors {origin(hosts.page)}",
        )
    )


def decide_request(
    scheme: str, host: str, port: int, resource_type: str, hosts: AppHosts, allowed: Iterable[str]
) -> RequestDecision:
    """Whether either frame of the app may load ``scheme://host:port``."""
    scheme, host = scheme.lower(), host.lower()
    if scheme == SCHEME:
        if host in (hosts.page, hosts.app):
            return RequestDecision(True, "the app's own origins")
        return RequestDecision(False, "another frame's origin")
    if scheme in ("data", "blob"):
        return RequestDecision(True, "local data")
    if scheme in ("https", "http") and resource_type in RESOURCE_TYPES:
        for source in allowed_sources(allowed):
            if _matches(source, scheme, host, port):
                return RequestDecision(True, "a resource domain the user allowed")
    return RequestDecision(False, f"{scheme or 'relative'} requests leave the sandbox")


def _matches(source: str, scheme: str, host: str, port: int) -> bool:
    want_scheme, _, rest = source.partition("://")
    want_host, _, want_port = rest.partition(":")
    default = 443 if scheme == "https" else 80
    if want_scheme != scheme or (port if port > 0 else default) != (int(want_port) if want_port else default):
        return False
    if want_host.startswith("*."):
        return host.endswith(want_host[1:]) and host != want_host[2:]
    return host == want_host


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
