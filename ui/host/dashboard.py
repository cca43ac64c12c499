"""A simple dashboard: the enabled, approved widgets of one workspace, side by side.

What the main window shows until it has its own layout; it only needs an ``ExtensionHost``
and a list of what to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ui.host.host import ExtensionHost
from ui.host.view import ExtensionView
from ui.qt import QGridLayout, QGroupBox, QVBoxLayout, QWidget, Signal


@dataclass(frozen=True)
class Slot:
    """One widget on the dashboard."""

    extension: str
    name: str
    folder: Path
    entry: str


class Dashboard(QWidget):
    allReady = Signal()
    """Every widget loaded and connected (once, after the first load)."""

    def __init__(
        self,
        host: ExtensionHost,
        workspace: str,
        slots: list[Slot],
        columns: int = 2,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.workspace = workspace
        self.views: list[ExtensionView] = []
        self._waiting: set[int] = set()
        grid = QGridLayout(self)
        for index, slot in enumerate(slots):
            box = QGroupBox(slot.name, self)
            inner = QVBoxLayout(box)
            inner.setContentsMargins(4, 4, 4, 4)
            instance = f"{workspace}/{slot.extension}/{index}"
            view = host.view(workspace, slot.extension, slot.folder, slot.entry, instance, box)
            view.setMinimumSize(360, 240)
            inner.addWidget(view)
            grid.addWidget(box, index // columns, index % columns)
            self.views.append(view)
            self._waiting.add(index)
            view.ready.connect(lambda i=index: self._ready(i))

    def load(self) -> None:
        for view in self.views:
            view.load()

    def _ready(self, index: int) -> None:
        if index in self._waiting:
            self._waiting.discard(index)
            if not self._waiting:
                self.allReady.emit()
