"""``ExtensionHost``: makes extension frames, one profile per extension, one view per instance.

The main window asks the host for a view of an installed extension; the host keeps each
extension's profile (its origin, in-memory storage and scheme handler) for as long as Helm runs
and gives every view the same call handler (the broker) and confirmer (Helm's dialog).
"""

from __future__ import annotations

from pathlib import Path

from broker.context import CallContext
from broker.summary import Confirmer
from ui.host.bridge import CallHandler
from ui.host.egress_check import ENGINE_CHECK
from ui.host.policy import extension_host
from ui.host.profile import ExtensionProfile
from ui.host.view import ExtensionView
from ui.qt import QObject, QWidget, Signal


class ExtensionHost(QObject):
    frameReady = Signal(object)
    """An ``ExtensionView`` loaded and connected its ``window.helm``."""

    def __init__(self, handler: CallHandler, confirm: Confirmer, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._handler = handler
        self._confirm = confirm
        self._profiles: dict[tuple[str, str], ExtensionProfile] = {}
        self._views: list[ExtensionView] = []
        ENGINE_CHECK.start()  # now, so the first frame finds it done or nearly

    def profile(self, workspace: str, extension: str, folder: Path) -> ExtensionProfile:
        key = (workspace, extension)
        profile = self._profiles.get(key)
        if profile is None or profile.root != folder:
            profile = ExtensionProfile(folder, extension_host(workspace, extension), self)
            self._profiles[key] = profile
        return profile

    def view(
        self,
        workspace: str,
        extension: str,
        folder: Path,
        entry: str,
        instance: str,
        parent: QWidget | None = None,
    ) -> ExtensionView:
        """A new frame for ``extension``; ``instance`` must stay the same across restarts of
        the same dashboard slot (the rate limit is counted per instance)."""
        profile = self.profile(workspace, extension, folder)
        ctx = CallContext(workspace, extension, instance)
        view = ExtensionView(profile, entry, ctx, self._handler, self._confirm, parent)
        self._views.append(view)
        view.ready.connect(lambda v=view: self.frameReady.emit(v))
        view.destroyed.connect(lambda _=None, v=view: self._forget(v))
        return view

    async def close(self, view: ExtensionView) -> None:
        """Close one frame this host made (cancelling its calls); the host forgets it at once,
        so closing the host later does not close it twice."""
        self._forget(view)
        await view.aclose()

    def _forget(self, view: ExtensionView) -> None:
        if view in self._views:
            self._views.remove(view)

    async def aclose(self) -> None:
        """Close every frame (cancelling its calls), then the profiles."""
        for view in list(self._views):
            await view.aclose()
        self._views.clear()
        for profile in self._profiles.values():
            profile.deleteLater()
        self._profiles.clear()
