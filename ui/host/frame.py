"""The web stack of one sandboxed frame: its web view, its page and its web channel.

An extension frame (``ui.host.view.ExtensionView``) and an MCP App's host page
(``ui.apps.view.AppView``) are built the same way: a ``QWebEngineView`` showing a ``HostPage``
on the frame's ``SandboxProfile``, no context menu, the page's scripts, one bridge object on a
web channel in Helm's isolated world only, and the clipboard guard watching the widget. What
differs — the page's navigation policy, the scripts, the bridge — is given.

The page keeps its view and its channel until Qt deletes it: a frame that closes or is cut
off closes its bridge (which then takes no more calls) instead of taking the channel or the view
away from a page that still runs. The engine binds each document's first message on the channel
to the page's channel without checking that it has one, so a page left without its channel
while its renderer is about to send (a load or reload under way) crashes Helm's process; and a
view without a page makes a default one, on the default profile, the next time it is shown or
hidden.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ui.host.clipboard import ClipboardGuard
from ui.host.page import HostPage
from ui.qt import QApplication, QObject, QWebChannel, QWebEngineScript, QWebEngineView, QWidget


class WebStack:
    """The web view of ``owner`` (a widget that lays it out), its page and its channel."""

    def __init__(
        self,
        owner: QWidget,
        make_page: Callable[[QObject], HostPage],
        scripts: Iterable[QWebEngineScript],
        bridge: tuple[str, QObject],
        extension: str,
    ) -> None:
        """``bridge``: (the name the isolated world reaches it by, the object)."""
        self.owner = owner
        self.web = QWebEngineView(owner)
        self.page = make_page(self.web)
        self.web.setPage(self.page)
        self.web.setContextMenuPolicy(self.web.contextMenuPolicy().NoContextMenu)
        for script in scripts:
            self.page.scripts().insert(script)
        self.channel = QWebChannel(self.page)
        self.channel.registerObject(*bridge)
        self.page.setWebChannel(self.channel, QWebEngineScript.ScriptWorldId.ApplicationWorld.value)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            ClipboardGuard.of(app).watch(owner, extension)

    def stop(self) -> None:
        """The page stops what it loads (its owner has closed the bridge: it is cut off)."""
        self.page.triggerAction(self.page.WebAction.Stop)

    def release(self) -> None:
        """The frame is closing (its owner has closed the bridge): Qt deletes the page, and its
        channel with it, before the view."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            ClipboardGuard.of(app).forget(self.owner)
        self.page.deleteLater()
