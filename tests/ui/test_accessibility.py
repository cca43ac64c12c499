"""Every screen through Qt's accessibility API and the keyboard, on a real Helm home.

Each screen is built on the real broker with real profiles, a real SQLite database and real
audit records; frames are placeholders (the web engine's own accessibility is Chromium's).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.audit import AuditRecord
from broker.extensions import install, review_and_approve
from broker.kinds.db.explorer import DbExplorer as ExplorerLogic
from broker.kinds.db.profiles import DATABASES, DbProfile
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.mcp.profiles import MCP_SERVERS, StdioProfile
from broker.workspaces import add_project, add_workspace
from tests.helpers import new_broker, write_extension
from tests.ui.a11y import reachable, tab_walk, unnamed
from tests.ui.dashboard_kit import open_main_window
from ui.apps.add import AddAppWindow
from ui.audit_view import AuditView
from ui.db_explorer import DbExplorerWindow
from ui.dialogs.review import review_dialog
from ui.frame_spec import FrameSpec
from ui.main_window import MainWindow
from ui.preferences import PreferencesStore
from ui.preferences_dialog import PreferencesDialog
from ui.qt import QPoint, QWidget
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage
from ui.workspace_model import WorkspaceModel
from ui.workspace_settings import WorkspaceSettings

NOTES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}
SETTINGS = {"repo": {"type": "string", "label": "Repository", "default": "me/app"},
            "limit": {"type": "integer", "label": "Items", "default": 5},
            "state": {"type": "choice", "label": "State", "choices": ["open", "closed"]}}  # fmt: skip


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    (tmp_path / "root" / "app").mkdir(parents=True)
    add_workspace(b.home, "main", tmp_path / "root")
    add_project(b.home, "main", "app", tmp_path / "root" / "app")
    for ext_id, kind, extra in (("com.example.board", "widget", {"settings": SETTINGS}),
                                ("com.example.editor", "tool", {})):  # fmt: skip
        raw = {"id": ext_id, "name": ext_id.split(".")[-1].title(), "version": "1.0.0", "kind": kind,
               "entry": "index.html", "connections": [NOTES], **extra}  # fmt: skip
        install(b.home, "main", write_extension(tmp_path / "ext" / ext_id, raw))
        run(review_and_approve(b, "main", ext_id))
    with sqlite3.connect(tmp_path / "app.db") as db:
        db.execute("CREATE TABLE t (id INTEGER)")
    DATABASES.store(b.home, b.credentials).save(DbProfile("app", "sqlite", path=str(tmp_path / "app.db")))
    SERVICES.store(b.home, b.credentials).save(
        ServiceProfile("api", "https://api.example.com"), {"token": "t"}
    )
    MCP_SERVERS.store(b.home, b.credentials).save(StdioProfile("tools", ("tools-mcp",), None))
    b.audit.record(AuditRecord("main", "com.example.board", "notes", "files", "write", "confirmed", "ok",
                               "Confirm file change", "0" * 64, "2026-01-01T10:00:00+00:00"))  # fmt: skip
    yield b
    run(b.aclose())


def main_window(qtbot: QtBot, broker: Broker) -> MainWindow:
    window = open_main_window(qtbot, broker)
    window.dashboard.cards[0].settings_button.setChecked(True)  # the widget's settings form
    row = window.model.row("main", "com.example.editor")
    assert row is not None and row.manifest is not None
    window.open_tool(FrameSpec("main", row.manifest, "com.example.editor#tool"))
    window.tabs.setCurrentWidget(window.dashboard)
    return window


def connections(_qtbot: QtBot, broker: Broker) -> QWidget:
    page = ConnectionsPage(BrokerConnections(broker))
    page.pages["http"].fields["auth"].set("oauth2")  # the OAuth2 box too
    return page


SCREENS: dict[str, Callable[[QtBot, Broker], QWidget]] = {
    "main window": main_window,
    "settings connections": connections,
    "workspace settings": lambda _q, b: WorkspaceSettings(b.home, "main"),
    "audit log": lambda _q, b: AuditView(b.audit),
    "db explorer": lambda _q, b: DbExplorerWindow(ExplorerLogic(b)),
    "preferences": lambda _q, b: PreferencesDialog(PreferencesStore.in_home(b.home.path)),
    "add app": lambda _q, b: AddAppWindow(b, "main"),
}


def active[W: QWidget](qtbot: QtBot, widget: W) -> W:
    """``widget`` shown in the active window, where the keys go."""
    qtbot.addWidget(widget)
    widget.show()
    widget.activateWindow()
    qtbot.waitUntil(widget.isActiveWindow, timeout=2000)
    return widget


@pytest.mark.parametrize("screen", SCREENS)
def test_every_interactive_control_of_every_screen_has_an_accessible_name(
    qtbot: QtBot, broker: Broker, screen: str
) -> None:
    widget = SCREENS[screen](qtbot, broker)
    qtbot.addWidget(widget)
    widget.show()
    assert unnamed(widget) == []


def test_every_interactive_control_of_the_review_dialog_has_an_accessible_name(
    qtbot: QtBot, broker: Broker, run: Any
) -> None:
    reviewed = run(WorkspaceModel(broker).review("main", "com.example.board"))
    dialog = review_dialog(reviewed, guard_ms=0)
    qtbot.addWidget(dialog)
    dialog.show()
    assert unnamed(dialog) == []


@pytest.mark.parametrize("screen", SCREENS)
def test_tab_reaches_every_control_of_every_screen_and_comes_back(
    qtbot: QtBot, broker: Broker, screen: str
) -> None:
    widget = active(qtbot, SCREENS[screen](qtbot, broker))
    walked = tab_walk(qtbot, reachable(widget)[0])
    # What is reachable once Tab went round (focusing a list can load what it lists).
    assert [c for c in reachable(widget) if c not in walked] == []
    assert len(walked) == len(set(walked)), "Tab went round before it came back"


def reading_order(walked: list[QWidget], root: QWidget) -> list[tuple[int, int]]:
    """Where each control sits in ``root``, top to bottom then left to right."""
    points = [w.mapTo(root, QPoint(0, 0)) for w in walked]
    return [(p.y(), p.x()) for p in points]


def test_tab_goes_down_the_sidebar_in_reading_order_then_into_the_pages(qtbot: QtBot, broker: Broker) -> None:
    window = active(qtbot, main_window(qtbot, broker))
    walked = tab_walk(qtbot, window.workspace_box)
    side = window.workspace_box.parentWidget()
    in_side = [side.isAncestorOf(w) for w in walked]
    assert in_side == sorted(in_side, reverse=True), "the sidebar first, then the pages, once"
    order = reading_order([w for w in walked if side.isAncestorOf(w)], side)
    assert len(order) >= 8  # the workspace, Get started, the list, its buttons
    assert order == sorted(order)


@pytest.mark.parametrize("screen", ["preferences", "workspace settings", "audit log", "db explorer"])
def test_tab_goes_through_a_one_column_screen_in_reading_order(
    qtbot: QtBot, broker: Broker, screen: str
) -> None:
    widget = active(qtbot, SCREENS[screen](qtbot, broker))
    controls = reachable(widget)
    first = min(controls, key=lambda w: reading_order([w], widget)[0])
    order = reading_order(tab_walk(qtbot, first), widget)
    assert len(order) >= 3
    assert order == sorted(order)
