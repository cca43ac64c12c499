"""``AppHost``: makes the frames of MCP Apps and owns what they share.

Built once in ``app/`` beside the extension host: the broker, the model
contexts apps keep per instance, how the user is asked about links (``OpenLinkDialog``, one at
a time per app, then the system browser, given exactly the link shown) and which confirmation
dialog writes get. ``AppAwareFactory`` puts it in
front of the dashboard's view factory: a manifest with an ``app`` section runs as an app,
anything else as an extension frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from broker.broker import Broker
from broker.context import AppInstance, CallContext
from broker.errors import CallError, ErrorCode
from ui.aio import OwnedTasks
from ui.apps.dialogs import OpenLinkDialog
from ui.apps.frame import AppFrame
from ui.apps.links import prepare_link, system_browser
from ui.apps.view import AppServices
from ui.dashboard import FrameSpec, ViewFactory
from ui.dialogs.base import GUARD_MS, answer
from ui.dialogs.confirm import ConfirmDialog, ConfirmDialogFactory
from ui.qt import QObject, QWidget, Signal

Opener = Callable[[str], None]


class AppHost(QObject):
    frameReady = Signal(object)
    """An app's ``AppView`` loaded and connected."""

    linkAsked = Signal(object)
    """An ``OpenLinkDialog`` is about to ask the user (author mode and tests watch it)."""

    reviewAsked = Signal(str, str)
    """(workspace, extension id): the user asked to review an app that changed (its frame's
    Review… button); the window that shows reviews answers it."""

    def __init__(
        self,
        broker: Broker,
        *,
        dialogs: ConfirmDialogFactory = ConfirmDialog,
        open_url: Opener = system_browser,
        guard_ms: int = GUARD_MS,
        observe: Callable[[str, str], None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = AppServices(broker, {}, self._ask_link, observe)
        self._dialogs, self._open_url, self._guard_ms = dialogs, open_url, guard_ms
        self.frames: list[AppFrame] = []
        self.link_dialogs: list[OpenLinkDialog] = []
        self._asking: set[tuple[str, str]] = set()
        """The apps (workspace, extension) with an open-link dialog open."""
        self.tasks = OwnedTasks(self)

    def frame(
        self,
        workspace: str,
        ext_id: str,
        instance: str,
        parent: QWidget | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> AppFrame:
        """The frame of one app instance; ``settings`` are the widget's settings (the opening
        tool's arguments), the form's defaults when None."""
        frame = AppFrame(
            self.services,
            CallContext.of(AppInstance(workspace, ext_id, instance)),
            self._dialogs,
            self.tasks.start,
            parent,
            settings,
        )
        frame.ready.connect(self.frameReady)
        frame.reviewAsked.connect(lambda: self.reviewAsked.emit(workspace, ext_id))
        frame.destroyed.connect(lambda _=None, f=frame: self.frames.remove(f) if f in self.frames else None)
        self.frames.append(frame)
        return frame

    async def _ask_link(self, ctx: CallContext, app_name: str, url: str) -> bool:
        link = prepare_link(url)
        if isinstance(link, str):
            raise CallError(ErrorCode.REFUSED, f"Invalid URL: {link}")
        app = (ctx.workspace, ctx.extension)
        if app in self._asking:
            raise CallError(ErrorCode.REFUSED, "the app is already asking to open a link; one at a time")
        frame = next((f for f in self.frames if f.ctx == ctx), None)
        parent = frame.dialog_parent() if frame is not None else None
        dialog = OpenLinkDialog(f"{app_name} ({ctx.extension})", link, parent, guard_ms=self._guard_ms)
        self._asking.add(app)
        self.link_dialogs.append(dialog)
        self.linkAsked.emit(dialog)
        try:
            confirmed = (await answer(dialog)).value == "confirmed"
        finally:
            self._asking.discard(app)
            self.link_dialogs.remove(dialog)
            dialog.deleteLater()
        if confirmed:
            self._open_url(link.url)
        return confirmed

    async def aclose(self) -> None:
        for frame in list(self.frames):
            await frame.aclose()
        self.frames.clear()
        await self.tasks.aclose()


class AppAwareFactory:
    """The dashboard's view factory: apps through ``AppHost``, extensions through ``fallback``."""

    def __init__(self, fallback: ViewFactory, apps: AppHost) -> None:
        self.fallback, self.apps = fallback, apps

    def __call__(self, frame: FrameSpec, parent: QWidget) -> QWidget:
        if frame.manifest.app is None:
            return self.fallback(frame, parent)
        view = self.apps.frame(frame.workspace, frame.manifest.id, frame.instance, parent, frame.settings)
        view.setMinimumSize(320, 240)
        return view
