"""The main window on a real Helm home: workspaces, the dashboard, tools, review, settings."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.extensions import install, review_and_approve
from broker.kinds.db.explorer import DbExplorer as ExplorerLogic
from broker.mcp import profiles as mcp_profiles
from broker.mcp import servers as mcp_servers
from broker.mcp.session import McpLimits
from broker.summary import Decision
from broker.workspaces import add_project, add_workspace
from tests.helpers import from_file_command, new_broker, tools_file, write_extension
from tests.ui.dashboard_kit import Frames
from ui.audit_view import AuditView
from ui.db_explorer import DbExplorerWindow
from ui.dialogs.review import ReviewDialog
from ui.main_window import MainWindow
from ui.qt import QLabel, Qt, QTreeWidgetItem, QWidget
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage
from ui.workspace_model import WorkspaceModel

NOTES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.md"],
    "operations": ["list", "read"],
}


def manifest(ext_id: str, name: str, kind: str = "widget", **extra: Any) -> dict[str, Any]:
    raw = {
        "id": ext_id,
        "name": name,
        "version": "1.0.0",
        "kind": kind,
        "entry": "index.html",
        "connections": [NOTES],
    }
    raw.update(extra)
    return raw


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    add_workspace(b.home, "main", root)
    add_project(b.home, "main", "app", root / "app")
    settings = {"repo": {"type": "string", "label": "Repository", "default": "me/app"}}
    for ext_id, name, kind, extra in (
        ("com.example.clock", "Clock", "widget", {}),
        ("com.example.board", "Board", "widget", {"settings": settings}),
        ("com.example.editor", "Editor", "tool", {}),
    ):
        folder = write_extension(tmp_path / "ext" / ext_id, manifest(ext_id, name, kind, **extra))
        install(b.home, "main", folder)
        run(review_and_approve(b, "main", ext_id))
    yield b
    run(b.aclose())


@pytest.fixture
def frames() -> Frames:
    return Frames()


def make_window(qtbot: QtBot, broker: Broker, frames: Frames) -> MainWindow:
    window = MainWindow(WorkspaceModel(broker), frames, BrokerConnections(broker), ExplorerLogic(broker))
    qtbot.addWidget(window)
    window.show()
    return window


@pytest.fixture
def window(qtbot: QtBot, broker: Broker, frames: Frames) -> MainWindow:
    return make_window(qtbot, broker, frames)


def tree_rows(window: MainWindow) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for i in range(window.tree.topLevelItemCount()):
        top = window.tree.topLevelItem(i)
        assert top is not None
        out[top.text(0)] = [(top.child(j).text(0), top.child(j).text(1)) for j in range(top.childCount())]
    return out


def select(window: MainWindow, name: str) -> QTreeWidgetItem:
    for item in window.tree.findItems(name, Qt.MatchFlag.MatchStartsWith | Qt.MatchFlag.MatchRecursive):
        window.tree.setCurrentItem(item)
        return item
    raise AssertionError(f"{name} not in the tree")


def test_the_workspace_shows_its_projects_and_extensions(window: MainWindow) -> None:
    assert window.workspace == "main"
    rows = tree_rows(window)
    assert [r[0] for r in rows["Projects"]] == ["app"]
    assert ("Board 1.0.0", "approved") in rows["Extensions"]
    assert ("Editor 1.0.0", "approved") in rows["Extensions"]


def test_enabled_widgets_sit_side_by_side_on_the_dashboard(window: MainWindow, frames: Frames) -> None:
    cards = window.dashboard.cards
    assert [c.frame.manifest.id for c in cards] == ["com.example.board", "com.example.clock"]
    assert cards[0].geometry().x() != cards[1].geometry().x()
    assert cards[0].geometry().y() == cards[1].geometry().y()
    board = next(f for f in frames.made if f.manifest.id == "com.example.board")
    assert board.settings == {"repo": "me/app"}  # the manifest's default
    assert board.instance == "com.example.board#dashboard"


def test_a_tool_opens_as_a_full_page(qtbot: QtBot, window: MainWindow, frames: Frames) -> None:
    select(window, "Editor")
    assert window.buttons["open"].isEnabled()
    qtbot.mouseClick(window.buttons["open"], Qt.MouseButton.LeftButton)
    assert window.tabs.count() == 3  # Dashboard, Activity, Editor
    assert window.tabs.tabText(2) == "Editor"
    assert window.tabs.currentWidget() is window.tools["com.example.editor"]
    assert frames.made[-1].instance == "com.example.editor#tool"
    window.close_tab(2)
    assert window.tabs.count() == 2


def test_a_fixed_page_sits_before_the_tools_without_a_close_button_and_is_in_front_again_after_a_restart(
    qtbot: QtBot, broker: Broker, frames: Frames
) -> None:
    window = make_window(qtbot, broker, frames)
    select(window, "Editor")
    window.open_selected()
    agents = QWidget()
    window.add_page(agents, "Agents", "agents")
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        "Dashboard", "Activity", "Agents", "Editor",
    ]  # fmt: skip
    bar = window.tabs.tabBar()
    assert bar.tabButton(2, bar.ButtonPosition.RightSide) is None
    window.tabs.setCurrentWidget(agents)
    again = make_window(qtbot, broker, frames)
    assert again.tabs.currentWidget() is again.dashboard  # no Agents page yet
    page = QWidget()
    again.add_page(page, "Agents", "agents")
    assert again.tabs.currentWidget() is page


def test_disabling_takes_a_widget_off_the_dashboard_and_enabling_brings_it_back(
    qtbot: QtBot, window: MainWindow, broker: Broker
) -> None:
    select(window, "Clock")
    qtbot.mouseClick(window.buttons["toggle"], Qt.MouseButton.LeftButton)
    assert [c.frame.manifest.id for c in window.dashboard.cards] == ["com.example.board"]
    assert not broker.home.settings().workspace("main").extensions["com.example.clock"].enabled
    assert ("Clock 1.0.0", "disabled, approved") in tree_rows(window)["Extensions"]
    select(window, "Clock")
    assert window.buttons["toggle"].text() == "Enable"
    qtbot.mouseClick(window.buttons["toggle"], Qt.MouseButton.LeftButton)
    assert len(window.dashboard.cards) == 2


def test_removing_an_extension(qtbot: QtBot, window: MainWindow, broker: Broker) -> None:
    select(window, "Board")
    qtbot.mouseClick(window.buttons["remove"], Qt.MouseButton.LeftButton)
    assert "com.example.board" not in broker.home.settings().workspace("main").extensions
    assert [c.frame.manifest.id for c in window.dashboard.cards] == ["com.example.clock"]


def test_widget_settings_are_applied_stored_and_given_to_a_new_frame(
    qtbot: QtBot, window: MainWindow, frames: Frames, broker: Broker
) -> None:
    card = window.dashboard.cards[0]
    qtbot.mouseClick(card.settings_button, Qt.MouseButton.LeftButton)
    assert card.form is not None
    edit = card.form.inputs["repo"]
    edit.clear()  # type: ignore[attr-defined]
    qtbot.keyClicks(edit, "team/site")
    qtbot.mouseClick(card.form.apply_button, Qt.MouseButton.LeftButton)
    assert frames.made[-1].settings == {"repo": "team/site"}
    assert card.frame.settings == {"repo": "team/site"}
    stored = json.loads((broker.home.path / "widget-settings.json").read_text("utf-8"))
    assert stored == {"main": {"com.example.board": {"repo": "team/site"}}}


@pytest.mark.parametrize("damaged", ['{"main": {"com.example.board": ', '{"main": ["com.example.board"]}'])
def test_a_damaged_widget_settings_file_is_reported_and_kept_as_it_is(
    qtbot: QtBot, broker: Broker, frames: Frames, damaged: str
) -> None:
    path = broker.home.path / "widget-settings.json"
    path.write_text(damaged, encoding="utf-8")
    window = make_window(qtbot, broker, frames)
    assert "widget settings file" in window.notice.text() and "left it as it is" in window.notice.text()
    card = next(c for c in window.dashboard.cards if c.frame.manifest.id == "com.example.board")
    assert card.frame.settings == {"repo": "me/app"}  # its defaults
    qtbot.mouseClick(card.settings_button, Qt.MouseButton.LeftButton)
    assert card.form is not None
    edit = card.form.inputs["repo"]
    edit.clear()  # type: ignore[attr-defined]
    qtbot.keyClicks(edit, "team/site")
    window.notice.clear()
    qtbot.mouseClick(card.form.apply_button, Qt.MouseButton.LeftButton)
    assert card.frame.settings == {"repo": "team/site"}  # applied for this session
    assert "widget settings file" in window.notice.text()
    assert path.read_text("utf-8") == damaged


def review_dialog(qtbot: QtBot, window: MainWindow) -> ReviewDialog:
    qtbot.waitUntil(lambda: any(isinstance(w, ReviewDialog) for w in window.windows.values()), timeout=5000)
    dialog = next(w for w in window.windows.values() if isinstance(w, ReviewDialog))
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    dialog.guard.release()
    return dialog


def change_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "ext" / "com.example.clock"
    raw = manifest("com.example.clock", "Clock")
    raw["connections"][0] = {**NOTES, "paths": ["*.md", "*.txt"]}
    (folder / "manifest.json").write_text(json.dumps(raw), encoding="utf-8")


def test_a_changed_extension_is_reviewed_again_when_its_workspace_opens_and_approve_restores_it(
    qtbot: QtBot, broker: Broker, frames: Frames, tmp_path: Path
) -> None:
    change_manifest(tmp_path)
    window = make_window(qtbot, broker, frames)
    assert [c.frame.manifest.id for c in window.dashboard.cards] == ["com.example.board"]
    dialog = review_dialog(qtbot, window)
    assert any("changed since you approved it" in label.text() for label in dialog.findChildren(QLabel))
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.dashboard.cards) == 2, timeout=5000)


def test_cancelling_review_leaves_the_extension_waiting_for_approval(
    qtbot: QtBot, broker: Broker, frames: Frames, tmp_path: Path
) -> None:
    change_manifest(tmp_path)
    window = make_window(qtbot, broker, frames)
    dialog = review_dialog(qtbot, window)
    with qtbot.waitSignal(dialog.decided, timeout=3000) as blocker:
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert blocker.args == [Decision.DECLINED]
    qtbot.waitUntil(lambda: not window.tasks, timeout=3000)
    assert ("Clock 1.0.0", "needs approval") in tree_rows(window)["Extensions"]
    assert len(window.dashboard.cards) == 1


def test_installing_an_extension_shows_its_review_then_approves_it(
    qtbot: QtBot, window: MainWindow, broker: Broker, tmp_path: Path
) -> None:
    folder = write_extension(tmp_path / "ext" / "com.example.new", manifest("com.example.new", "Newcomer"))
    window.install(str(folder))
    dialog = review_dialog(qtbot, window)
    assert dialog.review.id == "com.example.new"
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(window.dashboard.cards) == 3, timeout=5000)
    assert broker.home.settings().workspace("main").extensions["com.example.new"].approval is not None


def approve_when_changed(qtbot: QtBot, window: MainWindow, change: Callable[[], object]) -> ReviewDialog:
    """Wait for the review dialog, ``change`` the world while it is open, then click Approve."""
    dialog = review_dialog(qtbot, window)
    change()
    with qtbot.waitSignal(dialog.decided, timeout=3000):
        qtbot.mouseClick(dialog.accept_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.tasks, timeout=10000)
    return dialog


def test_a_manifest_changed_while_its_review_is_open_is_not_approved(
    qtbot: QtBot, window: MainWindow, broker: Broker, tmp_path: Path
) -> None:
    raw = manifest("com.example.new", "Newcomer")
    folder = write_extension(tmp_path / "ext" / "com.example.new", raw)
    window.install(str(folder))
    widened = {**raw, "connections": [{**NOTES, "paths": ["**"]}]}
    dialog = approve_when_changed(qtbot, window, lambda: write_extension(folder, widened))
    assert dialog.review.connections[0].reads[0].label == "files *.md"  # what the user saw
    assert "changed while you reviewed it; nothing was approved" in window.notice.text()
    assert broker.home.settings().workspace("main").extensions["com.example.new"].approval is None
    assert ("Newcomer 1.0.0", "needs approval") in tree_rows(window)["Extensions"]


def test_a_tool_changed_while_its_review_is_open_is_not_approved(
    qtbot: QtBot, window: MainWindow, broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_servers, "DEFAULT_LIMITS", McpLimits(tools_ttl=0))  # the user took their time
    tools = tools_file(tmp_path / "tools.json")
    mcp_profiles.MCP_SERVERS.store(broker.home, broker.credentials).save(
        mcp_profiles.parse("srv", {"command": from_file_command(tools)})
    )
    conn = {"id": "m", "kind": "mcp", "server": "srv", "operations": ["echo"]}
    folder = write_extension(tmp_path / "ext" / "com.example.tools", manifest("com.example.tools", "Tools",
                             connections=[conn]))  # fmt: skip
    window.install(str(folder))
    approve_when_changed(qtbot, window, lambda: tools_file(tools, "echo, and a new instruction"))
    assert "[m] changed while you reviewed it (tool echo: description changed" in window.notice.text()
    assert broker.home.settings().workspace("main").extensions["com.example.tools"].approval is None


def test_an_invalid_extension_folder_says_every_problem(window: MainWindow, tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "manifest.json").write_text('{"id": "x"}', encoding="utf-8")
    assert window.install(str(folder)) is None
    assert "$.name: is required" in window.notice.text()
    assert window.notice.textFormat() == Qt.TextFormat.PlainText


def test_the_menu_opens_settings_audit_and_the_db_explorer(window: MainWindow) -> None:
    window.menu_actions["connections"].trigger()
    window.menu_actions["audit"].trigger()
    window.menu_actions["explorer"].trigger()
    window.menu_actions["workspace"].trigger()
    assert isinstance(window.windows["connections"], ConnectionsPage)
    assert isinstance(window.windows["audit"], AuditView)
    assert isinstance(window.windows["explorer"], DbExplorerWindow)
    assert all(window.windows[k].isVisible() for k in ("connections", "audit", "explorer", "workspace"))
