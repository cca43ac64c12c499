"""The app's host page and its bridge: Helm's end of the postMessage relay.

``app_page`` is an extension frame's page (``ui.host.page.HostPage``: nothing granted — no
permissions, windows, dialogs, downloads, full screen) whose navigation policy allows exactly
two documents: the host page in the main frame and the app in its one subframe. ``AppBridge``
is the one object the host page's isolated world reaches over the web channel: ``post``
carries a JSON-RPC message from the app, ``deliver`` one from Helm. Between the app's frame and
the host page, messages go over a port the frame asks for (``port_script``). The app's identity is
fixed by whoever made the bridge. A message longer than ``MAX_MESSAGE_CHARS`` is refused in
the isolated world before it crosses (the app is answered there); ``refused`` tells Helm its
method and size, to count it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from importlib import resources

from broker.apps import meta
from ui.apps.policy import AppHosts, decide_navigation
from ui.host.page import HostPage, Navigation
from ui.host.policy import RequestDecision
from ui.host.shim import _qwebchannel_js
from ui.qt import QObject, QUrl, QWebEngineProfile, QWebEngineScript, Signal, Slot

log = logging.getLogger(__name__)

BRIDGE_OBJECT = "helmApp"
MAX_MESSAGE_CHARS = meta.MAX_MESSAGE_CHARS
PORT_ASK = "helm-app-port?"
"""What the app's frame posts to the host page for a port (``port_script``), once per document,
followed by a word naming the document."""
PORT_GIVE = "helm-app-port:"
"""What the host page posts back with the port, followed by the word it was asked with."""


def app_navigation(hosts: AppHosts) -> Navigation:
    """The app's host page's navigation policy (``HostPage``): it and its app frame stay where
    they were put."""

    def decide(url: QUrl, main_frame: bool) -> RequestDecision:
        return decide_navigation(url.scheme(), url.host(), url.path(), main_frame, hosts)

    return decide


def app_page(profile: QWebEngineProfile, hosts: AppHosts, parent: QObject | None = None) -> HostPage:
    """The host page of one app: an extension frame's page with the app's navigation policy."""
    return HostPage(profile, hosts.page, parent, navigation=app_navigation(hosts))


class AppBridge(QObject):
    """``post`` and ``ready`` are the slots the host page's isolated world uses."""

    deliver = Signal(str)
    """A JSON-RPC message for the app."""

    pageReady = Signal()

    scheme = Signal(str)
    """Helm's colour scheme (``light`` or ``dark``): the app frame's ``color-scheme``."""

    def __init__(
        self,
        receive: Callable[[str], None],
        refused: Callable[[str, int], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._receive, self._refused = receive, refused
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Take nothing more from the page: the app reaches Helm no more. Its channel stays
        while the page lives (``ui.host.frame`` says why); the view holds back what Helm would
        send (``AppView.send``)."""
        self._closed = True

    @Slot(str)
    def post(self, text: str) -> None:
        if self._closed:
            return
        if len(text) <= MAX_MESSAGE_CHARS:
            self._receive(text)
        else:  # the isolated world refuses these; one that got here anyway is counted too
            self._refused("", len(text))

    @Slot(str, int)
    def refused(self, method: str, chars: int) -> None:
        if not self._closed:
            self._refused(method[:100], max(int(chars), 0))

    @Slot()
    def ready(self) -> None:
        if not self._closed:
            self.pageReady.emit()


@cache
def _resource(name: str, **values: str) -> str:
    """``resources/apps/<name>`` with each ``%NAME%`` replaced by its value (each must be there),
    read once per process: every app's frame gets the same text."""
    text = resources.files("resources").joinpath("apps", name).read_text(encoding="utf-8")
    for key, value in values.items():
        mark = f"%{key}%"
        if mark not in text:
            raise RuntimeError(f"{name} must name {mark}")
        text = text.replace(mark, value)
    return text


@cache
def _host_script_source() -> str:
    relay = _resource(
        "host-isolated.js", MAX_MESSAGE_CHARS=str(MAX_MESSAGE_CHARS), PORT_ASK=PORT_ASK, PORT_GIVE=PORT_GIVE
    )
    return _qwebchannel_js() + "\n" + relay


def console_script() -> QWebEngineScript:
    """Author mode's console formatting (objects as JSON, bounded), in every document's own
    world as it is created, so a console line reads as in a browser."""
    script = QWebEngineScript()
    script.setName("helm-app-console")
    script.setSourceCode(_resource("console-format.js"))
    script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld.value)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    script.setRunsOnSubFrames(True)
    return script


def port_script() -> QWebEngineScript:
    """The app's end of its port to the host page (``resources/apps/app-port.js``): in the app's
    own world, as its document is created, before any script of the app's."""
    script = QWebEngineScript()
    script.setName("helm-app-port")
    script.setSourceCode(_resource("app-port.js", PORT_ASK=PORT_ASK, PORT_GIVE=PORT_GIVE))
    script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld.value)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    script.setRunsOnSubFrames(True)  # the app's document is the page's one subframe
    return script


def host_script() -> QWebEngineScript:
    """The relay, in Helm's isolated world of the host page's main frame only, once the page's
    body exists (it adds the app's frame to it)."""
    script = QWebEngineScript()
    script.setName("helm-app-host")
    script.setSourceCode(_host_script_source())
    script.setWorldId(QWebEngineScript.ScriptWorldId.ApplicationWorld.value)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentReady)
    script.setRunsOnSubFrames(False)
    return script
