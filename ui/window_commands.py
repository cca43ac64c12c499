"""What the command palette offers in the main window: every menu action, the first steps, the
pages, the workspaces, and the kill switch, Open and Review of each extension shown."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from broker.errors import HelmError
from ui import extension_tree
from ui.frame_spec import FrameSpec
from ui.get_started import STEPS
from ui.palette import Command
from ui.qt import QAction

if TYPE_CHECKING:
    from ui.main_window import MainWindow
    from ui.workspace_model import ExtensionRow


def window_commands(window: MainWindow) -> list[Command]:
    """The commands of now: they follow the workspace shown and its extensions."""
    return [
        *_menu(window),
        *_steps(window),
        *_pages(window),
        *_workspaces(window),
        *(c for row in _rows(window) for c in _extension(window, row)),
    ]


def _menu(window: MainWindow) -> list[Command]:
    return [
        Command(_plain(action), action.trigger, "Helm menu")
        for key, action in window.menu_actions.items()
        if key != "palette" and action.isEnabled()
    ]


def _steps(window: MainWindow) -> list[Command]:
    return [
        Command(text, partial(window.first_steps.start, key), about)
        for key, text, about, _icon in STEPS
        if key not in ("workspace", "extension")  # the Helm menu has those two
    ]


def _pages(window: MainWindow) -> list[Command]:
    tabs = window.tabs
    return [
        Command(f"Show {tabs.tabText(i)}", partial(tabs.setCurrentIndex, i), "page")
        for i in range(tabs.count())
    ]


def _workspaces(window: MainWindow) -> list[Command]:
    box = window.workspace_box
    names = [box.itemText(i) for i in range(box.count())]
    return [
        Command(f"Switch to workspace {n}", partial(box.setCurrentText, n), "workspace")
        for n in names
        if n != window.workspace
    ]


def _rows(window: MainWindow) -> list[ExtensionRow]:
    if not window.workspace:
        return []
    try:
        return window.model.extensions(window.workspace)
    except HelmError:
        return []


def _extension(window: MainWindow, row: ExtensionRow) -> list[Command]:
    where = window.workspace or ""

    def stop() -> None:
        if _select(window, row.id):
            window.stop_selected()

    def review() -> None:
        if _select(window, row.id):
            window.review_selected()

    out = [
        Command(f"{'Turn on' if row.stopped else 'Stop'} {row.name}", stop, row.id),
        Command(f"Review {row.name}", review, row.id),
    ]
    if row.kind == "tool" and row.runnable and row.manifest is not None:
        frame = FrameSpec(where, row.manifest, f"{row.id}#tool")
        out.append(Command(f"Open {row.name}", lambda: window.open_tool(frame), row.id))
    return out


def _select(window: MainWindow, ext_id: str) -> bool:
    item = extension_tree.find(window.tree, ext_id, None)
    if item is not None:
        window.tree.setCurrentItem(item)
    return item is not None


def _plain(action: QAction) -> str:
    return action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
