"""The web stack of one sandboxed frame: its web view, its page and its web channel.

An extension frame (``ui.host.view.ExtensionView``) and an MCP App's host page
(``ui.apps.view.AppView``) are built the same way: a ``QWebEngineView`` showing a ``HostPage``
on the frame's ``SandboxProfile``, no context menu, the page's scripts, one bridge object on a
web channel in Helm's isolated world only, and the clipboard guard watching the widget. What
differs — the page's navigation policy, the scripts, the bridge — is given.
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

    def cut_off(self) -> None:
        """The page can reach Helm no more (its channel is gone) and stops what it loads."""
        self.page.setWebChannel(None)  # type: ignore[arg-type]
        self.page.triggerAction(self.page.WebAction.Stop)

    def release(self) -> None:
        """The frame is closing: its channel goes, and Qt deletes the page."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            ClipboardGuard.of(app).forget(self.owner)
        self.page.setWebChannel(None)  # type: ignore[arg-type]
        self.web.setPage(None)  # type: ignore[arg-type]
        self.page.deleteLater()
