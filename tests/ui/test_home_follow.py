"""The window follows its Helm home while it runs: what a terminal changes shows without a restart.

Each change is made as ``helm`` makes it from another process (the same broker functions, which
save each file whole by a rename); the window only watches the home folder.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from broker.killswitch import KillSwitch
from broker.kinds.http.profiles import SERVICES, ServiceProfile
from broker.workspaces import add_workspace
from tests.support import REPO
from tests.ui.dashboard_kit import Frames, home_with, manifest, open_main_window
from ui import extension_tree

BOARD = "com.example.board"


def helm(home: Path, *argv: str) -> None:
    """``helm`` in its own process, as a user in a terminal runs it."""
    subprocess.run(
        [sys.executable, "-m", "app.cli", "--home", str(home), *argv],
        cwd=REPO, check=True, timeout=60, capture_output=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_workspace_added_in_a_terminal_appears_and_the_shown_one_stays(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, [manifest(BOARD, "Board")]))
    window = open_main_window(qtbot, broker)
    (tmp_path / "other").mkdir()
    helm(broker.home.path, "workspace", "add", "other", str(tmp_path / "other"))
    box = window.workspace_box
    qtbot.waitUntil(lambda: box.count() == 2, timeout=10_000)
    assert [box.itemText(i) for i in range(box.count())] == ["main", "other"]
    assert window.workspace == "main"


def test_stop_in_another_window_shows_in_the_list_and_unrelated_changes_keep_the_widgets_frames(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    frames = Frames()
    broker = run(home_with(tmp_path, [manifest(BOARD, "Board")]))
    window = open_main_window(qtbot, broker, frames)
    card = window.dashboard.cards[0]
    SERVICES.store(broker.home, broker.credentials).save(ServiceProfile("api", "https://api.example.com"))
    add_workspace(broker.home, "later", tmp_path)
    qtbot.waitUntil(lambda: window.workspace_box.count() == 2, timeout=10_000)
    KillSwitch(broker.home.path).set("main", BOARD, None, True)  # another Helm window's Stop

    def stopped() -> bool:
        item = extension_tree.find(window.tree, BOARD, None)
        return item is not None and item.text(1).startswith("stopped")

    qtbot.waitUntil(stopped, timeout=10_000)
    assert window.dashboard.cards[0] is card, "the widget was not made again"
    assert len(frames.made) == 1


def test_a_profile_added_in_a_terminal_is_listed_while_the_form_keeps_what_the_user_typed(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, []))
    window = open_main_window(qtbot, broker)
    connections = window.open_connections("http")
    services = connections.pages["http"]  # type: ignore[attr-defined]
    edit = services.fields["name"].edit
    edit.setText("half-typed")
    helm(broker.home.path, "service", "add", "pub", "--base-url", "https://api.example.com", "--no-token")
    qtbot.waitUntil(lambda: services.list.count() == 1, timeout=10_000)
    assert services.list.item(0).text() == "pub"
    assert edit.text() == "half-typed"
