"""A Helm home with widgets and tools installed and approved, and the main window on it.

Frames are plain labels (the dashboard, the tabs and the activity do not need the web engine);
the broker, the home and the extensions are real, and so are the calls tests make through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from broker import Broker
from broker.extensions import install, review_and_approve
from broker.kinds.db.explorer import DbExplorer as ExplorerLogic
from broker.workspaces import add_workspace
from tests.helpers import new_broker, write_extension
from ui.frame_spec import FrameSpec
from ui.main_window import MainWindow
from ui.qt import QLabel, QWidget
from ui.settings.backend import BrokerConnections
from ui.workspace_model import WorkspaceModel

NOTES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.md"],
    "operations": ["list", "read"],
}
DRAFTS = {**NOTES, "id": "drafts"}


def manifest(ext_id: str, name: str, kind: str = "widget", **extra: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "id": ext_id, "name": name, "version": "1.0.0", "kind": kind, "entry": "index.html",
        "connections": [NOTES, DRAFTS],
    }  # fmt: skip
    raw.update(extra)
    return raw


class Frames:
    """A view factory that records what it was asked to show."""

    def __init__(self) -> None:
        self.made: list[FrameSpec] = []

    def __call__(self, frame: FrameSpec, parent: QWidget) -> QWidget:
        self.made.append(frame)
        label = QLabel(f"frame {frame.manifest.id} {sorted(frame.settings.items())}", parent)
        label.setObjectName(f"frame:{frame.instance}")
        return label


async def home_with(tmp_path: Path, extensions: list[dict[str, Any]], workspace: str = "main") -> Broker:
    """A broker on a new home where ``extensions`` are installed and approved in ``workspace``."""
    broker = new_broker(tmp_path / "home")
    broker.home.ensure()
    root = tmp_path / "root"
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text("# a\n", encoding="utf-8")
    if workspace not in broker.home.settings().workspaces:
        add_workspace(broker.home, workspace, root)
    for raw in extensions:
        folder = write_extension(tmp_path / "ext" / raw["id"], raw)
        install(broker.home, workspace, folder)
        await review_and_approve(broker, workspace, raw["id"])
    return broker


def open_main_window(
    qtbot: QtBot, broker: Broker, frames: Frames | None = None, size: tuple[int, int] = (1200, 760)
) -> MainWindow:
    window = MainWindow(
        WorkspaceModel(broker), frames or Frames(), BrokerConnections(broker), ExplorerLogic(broker)
    )
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    settle(qtbot, window)
    return window


def settle(qtbot: QtBot, window: MainWindow) -> None:
    """Wait until the dashboard's scroll area has taken its final size (its scroll bars too)."""
    dash = window.dashboard
    qtbot.waitUntil(lambda: dash.viewport().width() == dash.widget().width(), timeout=3000)
