"""Get started beside the demo, and paths shown from the home folder, on a real Helm home.

The user's home folder is the test's own (``HOME``), so a workspace under it shows as ``~/…``.
Folder pickers are Helm's real, non-blocking dialogs; the test answers them as a person would.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from tests.helpers import new_broker, write_extension
from tests.ui.dashboard_kit import open_main_window
from ui.get_started import workspace_name
from ui.qt import QFileDialog, QLabel, Qt
from ui.settings.backend import BrokerConnections
from ui.settings.connections import ConnectionsPage
from ui.workspace_settings import WorkspaceSettings

NOTES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    (home / "src" / "app").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def broker(tmp_path: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "helm-home")
    b.home.ensure()
    yield b
    run(b.aclose())


def pick(dialog: QFileDialog, folder: Path) -> None:
    """The user chose ``folder`` in Helm's folder picker."""
    assert dialog.isVisible()
    assert dialog.fileMode() == QFileDialog.FileMode.Directory
    dialog.fileSelected.emit(str(folder))
    dialog.close()


def test_a_new_user_adds_a_workspace_from_a_folder_and_sees_it_from_home(
    qtbot: QtBot, broker: Broker, user: Path
) -> None:
    window = open_main_window(qtbot, broker)
    assert window.get_started.isVisible()
    qtbot.mouseClick(window.get_started.buttons["workspace"], Qt.MouseButton.LeftButton)
    pick(window.first_steps.picker.picker, user / "src" / "app")  # type: ignore[arg-type]
    assert broker.home.settings().workspaces["app"].root == user / "src" / "app"
    assert window.workspace == "app"
    assert window.notice.text() == "Added the workspace app (~/src/app)."
    settings = WorkspaceSettings(broker.home, "app")
    qtbot.addWidget(settings)
    root = next(label for label in settings.findChildren(QLabel) if label.text() == "~/src/app")
    assert str(user / "src" / "app") in root.toolTip()
    assert root.accessibleDescription() == str(user / "src" / "app")


def test_a_project_in_the_list_shows_its_folder_from_home_and_whole_in_its_tooltip(
    qtbot: QtBot, broker: Broker, user: Path
) -> None:
    from broker.workspaces import add_project, add_workspace

    add_workspace(broker.home, "main", user / "src")
    add_project(broker.home, "main", "app", user / "src" / "app")
    window = open_main_window(qtbot, broker)
    project = window.tree.topLevelItem(0).child(0)  # type: ignore[union-attr]
    assert (project.text(0), project.text(1)) == ("app", "~/src/app")
    assert str(user / "src" / "app") in project.toolTip(1)


@pytest.mark.parametrize(("step", "kind"), [("http", "http"), ("mcp", "mcp"), ("db", "db")])
def test_connect_opens_settings_at_the_kinds_tab_ready_for_a_new_profile(
    qtbot: QtBot, broker: Broker, step: str, kind: str
) -> None:
    window = open_main_window(qtbot, broker)
    qtbot.mouseClick(window.get_started.buttons[step], Qt.MouseButton.LeftButton)
    settings = window.windows["connections"]
    assert isinstance(settings, ConnectionsPage)
    assert settings.isVisible()
    assert settings.tabs.currentWidget() is settings.pages[kind]
    assert settings.pages[kind].current is None  # a new profile
    assert settings.focusWidget() is settings.pages[kind].fields["name"].input


def test_install_picks_a_folder_then_shows_the_review(
    qtbot: QtBot, broker: Broker, user: Path, tmp_path: Path
) -> None:
    from broker.workspaces import add_workspace

    add_workspace(broker.home, "main", user / "src")
    window = open_main_window(qtbot, broker)
    raw = {"id": "com.example.new", "name": "New", "version": "1.0.0", "kind": "widget",
           "entry": "index.html", "connections": [NOTES]}  # fmt: skip
    folder = write_extension(tmp_path / "new", raw)
    qtbot.mouseClick(window.get_started.buttons["extension"], Qt.MouseButton.LeftButton)
    pick(window.windows["picker"], folder)  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: "review:com.example.new" in window.windows, timeout=5000)
    assert window.windows["review:com.example.new"].isVisible()


def test_hiding_get_started_is_remembered_and_the_menu_brings_it_back(qtbot: QtBot, broker: Broker) -> None:
    window = open_main_window(qtbot, broker)
    qtbot.mouseClick(window.get_started.hide_button, Qt.MouseButton.LeftButton)
    assert not window.get_started.isVisible()
    again = open_main_window(qtbot, broker)
    assert not again.get_started.isVisible(), "hidden for good, in a new window too"
    again.menu_actions["get_started"].trigger()
    assert again.get_started.isVisible()
    assert again.focusWidget() is again.get_started.buttons["workspace"]
    assert open_main_window(qtbot, broker).get_started.isVisible()


@pytest.mark.parametrize(
    ("folder", "taken", "name"),
    [
        pytest.param("app", set(), "app", id="as-is"),
        pytest.param("My Code", set(), "My-Code", id="spaces"),
        pytest.param("app", {"app", "app-2"}, "app-3", id="taken"),
        pytest.param("été", set(), "t", id="non-ascii"),
        pytest.param("...", set(), "workspace", id="nothing-left"),
    ],
)
def test_a_workspace_is_named_after_its_folder(folder: str, taken: set[str], name: str) -> None:
    assert workspace_name(Path("/x") / folder, taken) == name


def test_the_list_sizes_its_state_column_to_the_states_not_to_a_long_project_folder(
    qtbot: QtBot, broker: Broker, tmp_path: Path
) -> None:
    from broker.workspaces import add_project, add_workspace

    deep = tmp_path.joinpath(*(["a-rather-long-folder-name"] * 6))
    deep.mkdir(parents=True)
    add_workspace(broker.home, "main", tmp_path)
    add_project(broker.home, "main", "app", deep)
    window = open_main_window(qtbot, broker)
    header = window.tree.header()
    assert header.sectionSize(1) >= window.tree.fontMetrics().horizontalAdvance("State")
    assert header.sectionSize(0) > header.sectionSize(1), "the names keep the room"


def test_where_secrets_are_kept_is_shown_from_home_and_whole_in_its_tooltip(
    qtbot: QtBot, user: Path, run: Any
) -> None:
    broker = new_broker(user / ".local" / "share" / "helm")
    try:
        page = ConnectionsPage(BrokerConnections(broker))
        qtbot.addWidget(page)
        whole = str(user / ".local" / "share" / "helm" / "credentials.json")
        assert "~/.local/share/helm/credentials.json (0600)" in page.store_label.text()
        assert str(user) not in page.store_label.text()
        assert whole in page.store_label.toolTip()
    finally:
        run(broker.aclose())


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("file /home/u/helm/c.json (0600)", "file ~/helm/c.json (0600)"),
        ("in /home/u", "in ~"),
        ("/home/u2/c.json and /home/u", "/home/u2/c.json and ~"),  # another user's folder stays
        ("/srv/home/u/c.json", "/srv/home/u/c.json"),
    ],
)
def test_a_sentence_names_paths_under_home_from_home(text: str, shown: str) -> None:
    from ui.paths import home_relative

    assert home_relative(text, "/home/u") == shown


def test_the_panel_calls_only_the_demo_helms_demo(qtbot: QtBot, broker: Broker, user: Path, run: Any) -> None:
    from app.demo import set_up_demo
    from broker.workspaces import add_workspace
    from ui.get_started import DEMO_INTRO, OWN_INTRO

    run(set_up_demo(broker))
    add_workspace(broker.home, "mine", user / "src")
    window = open_main_window(qtbot, broker)
    window.workspace_box.setCurrentText("demo")
    on_demo = window.get_started.intro.text()
    window.workspace_box.setCurrentText("mine")
    assert (on_demo, window.get_started.intro.text()) == (DEMO_INTRO, OWN_INTRO)
