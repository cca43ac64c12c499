"""The kill switch in the main window's extension list, on real calls through the real broker."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from broker import CallContext
from tests.helpers import WaitingConfirmer
from tests.ui.dashboard_kit import home_with, manifest, open_main_window
from ui import extension_tree
from ui.main_window import MainWindow
from ui.qt import Qt

BOARD = "com.example.board"
WRITER = {**manifest(BOARD, "Board"), "permissions": {"write": True}}
WRITER["connections"] = [
    {**WRITER["connections"][0], "operations": ["list", "read", "write"]},
    WRITER["connections"][1],
]
ON_DASHBOARD = CallContext("main", BOARD, f"{BOARD}#dashboard")


def select(window: MainWindow, connection: str | None = None) -> None:
    item = extension_tree.find(window.tree, BOARD, connection)
    assert item is not None
    window.tree.setCurrentItem(item)


def state(window: MainWindow, connection: str | None = None) -> str:
    item = extension_tree.find(window.tree, BOARD, connection)
    assert item is not None
    return item.text(1)


def test_stop_refuses_the_extensions_calls_says_so_on_its_widget_and_turn_on_brings_it_back(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, [WRITER]))
    window = open_main_window(qtbot, broker)
    select(window)
    assert window.buttons["stop"].text() == "Stop"
    qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
    assert state(window) == "stopped · approved"
    assert window.buttons["stop"].text() == "Turn on"
    refused = run(broker.call(ON_DASHBOARD, "notes", "list", {}))
    assert refused["error"]["code"] == "refused"
    assert "the user stopped com.example.board in Helm" in refused["error"]["message"]
    window.feed.deliver()
    strip = window.dashboard.cards[0].strip
    assert strip.isVisible()
    assert strip.code.text() == "notes: refused"
    assert strip.message.text().startswith("The user stopped com.example.board in Helm")
    qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
    assert state(window) == "approved"
    assert run(broker.call(ON_DASHBOARD, "notes", "list", {}))["ok"]
    window.feed.deliver()
    assert not strip.isVisible()  # a call that works clears the strip
    run(broker.aclose())


def test_a_stopped_connection_is_refused_while_the_others_work(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, [WRITER]))
    window = open_main_window(qtbot, broker)
    select(window, "drafts")
    qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
    assert state(window, "drafts") == "stopped"
    assert state(window, "notes") == "on"
    assert state(window) == "approved"
    item = extension_tree.find(window.tree, BOARD)
    assert item is not None and item.isExpanded()  # a stopped connection is in sight
    assert run(broker.call(ON_DASHBOARD, "drafts", "list", {}))["error"]["code"] == "refused"
    assert run(broker.call(ON_DASHBOARD, "notes", "list", {}))["ok"]
    window.close()
    again = open_main_window(qtbot, broker)  # a stop outlives a restart
    assert state(again, "drafts") == "stopped"
    run(broker.aclose())


def test_stop_cancels_the_calls_that_are_running(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    broker = run(home_with(tmp_path, [WRITER]))
    window = open_main_window(qtbot, broker)
    user = WaitingConfirmer()

    async def scenario() -> dict[str, Any]:
        args = {"path": "a.md", "text": "new\n", "expected_sha256": "0" * 64}
        call = asyncio.ensure_future(broker.request(ON_DASHBOARD, "notes", "write", args, user))
        await asyncio.wait_for(user.asked.wait(), 5)
        select(window)
        qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
        return await asyncio.wait_for(call, 5)

    result = run(scenario())
    assert result["error"]["code"] == "refused"
    assert "while this call was running" in result["error"]["message"]
    assert "1 running call(s) cancelled" in window.notice.text()
    assert list(broker.audit.records())[-1].decision == "cancelled"
    run(broker.aclose())


def test_stop_and_turn_on_say_what_they_did_as_done_and_a_failure_reads_as_a_failure(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, [WRITER]))
    window = open_main_window(qtbot, broker)
    select(window)
    said = []
    for _ in range(2):
        qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
        said.append((window.notice.text().split(":")[0], window.notice.property("tone")))
    window.install(str(tmp_path / "no-such-extension"))
    assert said == [("Stopped Board", "ok"), ("Turned Board back on.", "ok")]
    assert window.notice.property("tone") == "error"


def test_the_card_names_the_failing_connection_until_a_call_of_that_connection_succeeds(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, [WRITER]))
    window = open_main_window(qtbot, broker)
    strip = window.dashboard.cards[0].strip

    def calls(*connections: str) -> tuple[bool, str]:
        for connection in connections:
            run(broker.call(ON_DASHBOARD, connection, "list", {}))
        window.feed.deliver()
        return strip.isVisible(), strip.code.text()

    select(window, "notes")
    qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
    after_other_succeeded = calls("notes", "drafts")
    qtbot.mouseClick(window.buttons["stop"], Qt.MouseButton.LeftButton)
    after_turn_on = calls("drafts")
    assert after_other_succeeded == (True, "notes: refused")
    assert after_turn_on == (True, "notes: refused"), "only a call of notes itself clears it"
    assert calls("notes") == (False, "notes: refused")
