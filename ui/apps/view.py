"""``AppView``: one running MCP App — its web view, its bridge, its session with Helm.

Built as an extension frame is (``ui.host.frame.WebStack`` on a ``SandboxProfile``, a
``HostPage``); what is the app's own is the double iframe: two documents on two origins
(``ui.apps.profile``, ``ui.apps.policy``), the relay in the host page's isolated world and its
bridge (``ui.apps.page``).

The view is the app's ``HostWindow`` (``broker.apps.rpc``): it delivers Helm's messages to the
app, tells the app Helm's theme — ``light`` or ``dark`` and the specification's style variables,
from the same look the extension frames get (``ui.theme``) — and locale (the theme again
whenever the look changes); the app frame's ``color-scheme`` is Helm's scheme too, so
``prefers-color-scheme`` inside the app follows Helm rather than the system. It asks the user
before a link opens, and passes display mode requests to whoever holds it (``AppFrame``).
Closing asks the app to tear down and waits for its answer, bounded, before the page goes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from broker.broker import Broker
from broker.context import CallContext
from broker.summary import Confirmer
from ui.apps.loader import AppLoader
from ui.apps.page import BRIDGE_OBJECT, AppBridge, app_page, console_script, host_script, port_script
from ui.apps.policy import app_hosts
from ui.apps.profile import AppProfile
from ui.host.egress_check import ENGINE_CHECK, EgressCheck
from ui.host.frame import WebStack
from ui.qt import (
    QLocale,
    QUrl,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.theme import Theme
from ui.theme_data import Look, app_style_variables

if TYPE_CHECKING:  # the app's session imports the MCP SDK: only once an app opens
    from broker.apps.verify import OpenedApp

TEARDOWN_SECONDS = 3.0
AskLink = Callable[[CallContext, str, str], Awaitable[bool]]
"""(the app instance, its name, url) → whether the link was opened; ``CallError`` when refused."""


@dataclass(frozen=True)
class AppServices:
    """What every app view uses, built once by ``AppHost``."""

    broker: Broker
    contexts: dict[str, Any]
    ask_link: AskLink
    observe: Callable[[str, str], None] | None = None
    """Sees every message: ("app → helm" | "helm → app", JSON text) — author mode's log."""


class AppView(QWidget):
    ready = Signal()
    """The host page loaded and its bridge connected."""

    stopped = Signal(str)
    """Helm stopped the app (the start-up check failed late, or the page left); why."""

    def __init__(
        self,
        opened: OpenedApp,
        ctx: CallContext,
        services: AppServices,
        confirm: Confirmer,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.opened, self.ctx, self._services = opened, ctx, services
        self.mode = "inline"
        self.switch_mode: Callable[[str], str] = lambda _mode: self.mode
        hosts = app_hosts(ctx.workspace, ctx.extension)
        self.hosts = hosts
        allowed = opened.spec.allowed_resource_domains
        self.loader = AppLoader(services.broker, ctx, hosts, allowed, self)
        self.profile = AppProfile(hosts, opened.html, allowed, self.loader, self)
        self.profile.pages.scheme = Theme.of().look.scheme.value
        from broker.apps.rpc import AppSession  # the MCP SDK, once an app opens

        self.session = AppSession(services.broker, ctx, opened.spec, self, confirm, services.contexts)
        self.bridge = AppBridge(self._received, self.session.refused_large, self)
        self.bridge.pageReady.connect(self._page_ready)
        profile = self.profile.profile
        self.stack = WebStack(
            self,
            lambda parent: app_page(profile, hosts, parent),
            # Author mode (a log that observes) also formats the console as a browser does.
            (host_script(), port_script(), *((console_script(),) if services.observe is not None else ())),
            (BRIDGE_OBJECT, self.bridge),
            ctx.extension,
        )
        self.web, self.page, self.channel = self.stack.web, self.stack.page, self.stack.channel
        self.page.urlChanged.connect(self._url_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.web)
        Theme.of().changed.connect(self._look_changed)

    def _page_ready(self) -> None:
        self.bridge.scheme.emit(self.profile.pages.scheme)  # a change while the page loaded
        self.ready.emit()

    def load(self) -> None:
        ENGINE_CHECK.watch(self)
        self.page.load(QUrl(self.hosts.page_url))

    def engine_check_failed(self, outcome: EgressCheck) -> None:
        """The start-up check failed late: cut the app off from Helm and stop it."""
        self._stop(outcome.message)

    def _url_changed(self, url: QUrl) -> None:
        if not url.isEmpty() and url != QUrl(self.hosts.page_url):
            self._stop("Helm stopped this app: its host page was taken elsewhere.")

    def _stop(self, why: str) -> None:
        self.bridge.close()
        self.stack.stop()
        self.web.hide()
        self.stopped.emit(why)

    def _received(self, text: str) -> None:
        if self._services.observe is not None:
            self._services.observe("app → helm", text)
        self.session.receive(text)

    # -- the app's HostWindow ------------------------------------------------------------
    def send(self, text: str) -> None:
        if self.bridge.closed:  # stopped or closing: nothing more reaches the page
            return
        if self._services.observe is not None:
            self._services.observe("helm → app", text)
        self.bridge.deliver.emit(text)

    def context(self) -> dict[str, Any]:
        return {
            **look_context(Theme.of().look),
            "locale": QLocale().name().replace("_", "-"),
            "displayMode": self.mode,
            "availableDisplayModes": ["inline", "fullscreen"],
            "platform": "desktop",
            "userAgent": "Helm",
            "containerDimensions": {"width": self.width(), "height": self.height()},
        }

    async def open_link(self, url: str) -> bool:
        return await self._services.ask_link(self.ctx, self.opened.name, url)

    def set_display_mode(self, mode: str) -> str:
        self.mode = self.switch_mode(mode)
        return self.mode

    def _look_changed(self, look: Look) -> None:
        self.profile.pages.scheme = look.scheme.value
        if not self.bridge.closed:
            self.bridge.scheme.emit(look.scheme.value)
        self.session.notify_context(look_context(look))

    # -- closing -------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Ask the app to tear down (bounded), cancel its calls, then let the page go."""
        ENGINE_CHECK.unwatch(self)
        with contextlib.suppress(RuntimeError):  # already disconnected
            Theme.of().changed.disconnect(self._look_changed)
        try:
            await self.session.teardown("the app is closing", TEARDOWN_SECONDS)
        finally:
            self.bridge.close()
            await self.session.aclose()
            await self.loader.aclose()
            self.stack.release()
            self.profile.deleteLater()
            self.deleteLater()


def look_context(look: Look) -> dict[str, Any]:
    """The host context's theme: ``light`` or ``dark``, and the style variables (the same
    colours and text size as the frames' ``--helm-*`` variables)."""
    return {"theme": look.scheme.value, "styles": {"variables": app_style_variables(look)}}
