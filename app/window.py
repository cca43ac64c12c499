"""The window ``helm`` opens: one workspace's widgets on a dashboard.

A small stand-in for the full main window: it shows the dashboard of the first workspace and
wires the host to the broker and to Helm's write dialog.
"""

from __future__ import annotations

import asyncio

from broker import Broker, Confirmer
from ui.dialogs.confirm import DialogConfirmer
from ui.host.dashboard import Dashboard, Slot
from ui.host.host import ExtensionHost
from ui.qt import QCloseEvent, QMainWindow, Signal


class HelmWindow(QMainWindow):
    closing = Signal()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.closing.emit()
        super().closeEvent(event)


class Window:
    """The window, its extension host and dashboard, with awaitable milestones."""

    def __init__(
        self, broker: Broker, workspace: str, extensions: list[str], confirm: Confirmer | None = None
    ) -> None:
        self.window = HelmWindow()
        self.window.setWindowTitle(f"Helm — {workspace}")
        self.confirm = confirm or DialogConfirmer(self.window)
        self.host = ExtensionHost(broker, self.confirm, self.window)
        slots = []
        for ext in extensions:
            manifest = broker.manifest(workspace, ext)
            slots.append(Slot(ext, manifest.name, manifest.folder, manifest.entry))
        self.dashboard = Dashboard(self.host, workspace, slots, parent=self.window)
        self.window.setCentralWidget(self.dashboard)
        self.window.resize(1200, 800)
        self._ready = asyncio.Event()
        self._closed = asyncio.Event()
        self.dashboard.allReady.connect(self._ready.set)
        self.window.closing.connect(self._closed.set)
        if not slots:
            self._ready.set()

    async def wait_ready(self, within: float) -> bool:
        """Whether every widget loaded and connected within ``within`` seconds."""
        try:
            async with asyncio.timeout(within):
                await self._ready.wait()
        except TimeoutError:
            return False
        return True

    async def closed(self) -> None:
        await self._closed.wait()

    async def aclose(self) -> None:
        await self.host.aclose()
        self.window.deleteLater()


def open_window(
    broker: Broker, workspace: str, extensions: list[str], confirm: Confirmer | None = None
) -> Window:
    window = Window(broker, workspace, extensions, confirm)
    window.window.show()
    window.dashboard.load()
    return window
