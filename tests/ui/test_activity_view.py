"""The Activity page on real calls through the real broker: every call listed with its local
time, outcome, duration and size; filters; a live count per extension; earlier runs from disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from broker import Broker, CallContext
from broker.activity import ActivityRecord
from tests.helpers import new_broker
from tests.ui.dashboard_kit import home_with, manifest, open_main_window
from ui.activity_view import ActivityTable, ActivityView
from ui.main_window import MainWindow
from ui.qt import Qt
from ui.when import local_time

BOARD, CLOCK = "com.example.board", "com.example.clock"
EXTENSIONS = [manifest(BOARD, "Board"), manifest(CLOCK, "Clock")]


def rows(view: ActivityView) -> list[list[str]]:
    model = view.table.model()
    return [
        [str(model.index(r, c).data()) for c in range(model.columnCount())] for r in range(model.rowCount())
    ]


async def calls(broker: Broker) -> list[dict[str, Any]]:
    board, clock = CallContext("main", BOARD, "b"), CallContext("main", CLOCK, "c")
    return [
        await broker.call(board, "notes", "list", {}),
        await broker.call(board, "drafts", "read", {"path": "a.md"}),
        await broker.call(clock, "notes", "read", {"path": "missing.md"}),
        await broker.call(clock, "notes", "delete", {}),
    ]


def shown(qtbot: QtBot, window: MainWindow, count: int) -> ActivityView:
    window.tabs.setCurrentWidget(window.activity)
    window.feed.deliver()
    qtbot.waitUntil(lambda: window.activity.table.model().rowCount() == count, timeout=3000)
    return window.activity


def test_every_call_is_listed_newest_first_with_local_time_outcome_duration_and_size(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, EXTENSIONS))
    window = open_main_window(qtbot, broker)
    results = run(calls(broker))
    view = shown(qtbot, window, 4)
    table = rows(view)
    assert [r[1:4] for r in table] == [
        ["Clock", "notes", "delete"],
        ["Clock", "notes", "read"],
        ["Board", "drafts", "read"],
        ["Board", "notes", "list"],
    ]
    assert [r[5] for r in table] == ["refused", results[2]["error"]["code"], "ok", "ok"]
    records = list(broker.activity.recent)
    assert table[3][0] == local_time(records[0].time)
    assert table[3][6] == f"{len(json.dumps(results[0], separators=(',', ':')).encode())} B"
    assert table[3][4].endswith("ms")
    assert {r[7] for r in table} == {"main"}, "each call names its workspace"
    tip = view.table.model().index(0, 5).data(Qt.ItemDataRole.ToolTipRole)
    assert "delete" in tip  # Helm's message for the refusal, on the screen only
    run(broker.aclose())


def test_filters_narrow_the_list_by_extension_connection_and_outcome(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, EXTENSIONS))
    window = open_main_window(qtbot, broker)
    run(calls(broker))
    view = shown(qtbot, window, 4)
    f = view.filters
    f["extension"].setCurrentIndex(f["extension"].findData(BOARD))
    assert [r[1] for r in rows(view)] == ["Board", "Board"]
    f["connection"].setCurrentIndex(f["connection"].findData("drafts"))
    assert [r[2:4] for r in rows(view)] == [["drafts", "read"]]
    f["extension"].setCurrentIndex(0)
    f["connection"].setCurrentIndex(0)
    f["outcome"].setCurrentIndex(f["outcome"].findText("Failed (anything but ok)"))
    assert [r[1] for r in rows(view)] == ["Clock", "Clock"]
    f["outcome"].setCurrentIndex(f["outcome"].findData("ok"))
    assert [r[3] for r in rows(view)] == ["read", "list"]
    assert view.shown.text() == "2 of 4 call(s)"
    run(broker.aclose())


def test_the_count_per_extension_follows_the_calls_live(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    broker = run(home_with(tmp_path, EXTENSIONS))
    window = open_main_window(qtbot, broker)
    run(calls(broker))
    view = shown(qtbot, window, 4)

    def counts() -> dict[str, tuple[str, str]]:
        c = view.counts
        return {c.item(r, 0).text(): (c.item(r, 1).text(), c.item(r, 2).text()) for r in range(c.rowCount())}

    assert counts() == {"Board": ("2", "0"), "Clock": ("2", "2")}
    run(broker.call(CallContext("main", BOARD, "b"), "notes", "list", {}))
    qtbot.waitUntil(lambda: counts().get("Board") == ("3", "0"), timeout=3000)  # the feed's batch
    run(broker.aclose())


def test_calls_of_an_earlier_run_are_read_from_the_log_when_the_page_is_first_shown(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, EXTENSIONS))
    run(calls(broker))
    run(broker.aclose())  # Helm quits: the log is written
    again = new_broker(tmp_path / "home")
    window = open_main_window(qtbot, again)
    assert window.activity.table.model().rowCount() == 0  # not read at start-up
    view = shown(qtbot, window, 4)
    assert [r[3] for r in rows(view)] == ["delete", "read", "read", "list"]
    run(again.call(CallContext("main", BOARD, "b"), "notes", "list", {}))
    window.feed.deliver()
    assert [r[3] for r in rows(view)][:2] == ["list", "delete"]
    run(again.aclose())


def test_the_list_keeps_at_most_its_limit(qtbot: QtBot) -> None:
    table = ActivityTable(lambda _ws, ext: ext, keep=5)
    records = [ActivityRecord(float(i), "ws", "x", "i", "c", f"op{i}", 1.0, "ok", 10) for i in range(12)]
    table.add(records[:7])
    table.add(records[7:])
    table.add(records[10:])  # already shown: not twice
    assert table.rowCount() == 5
    assert [table.record(r).operation for r in range(5)] == ["op11", "op10", "op9", "op8", "op7"]


def test_the_selected_call_is_shown_in_full_with_what_only_the_user_sees(
    qtbot: QtBot, tmp_path: Path
) -> None:
    broker = Broker(tmp_path / "home")
    view = ActivityView(broker.activity, lambda _ws, ext: {"x": "Board"}.get(ext, ext))
    qtbot.addWidget(view)
    failed = ActivityRecord(
        1_700_000_000.0, "main", "x", "x#1", "m", "echo", 12.0, "unavailable", 80,
        "MCP server 'srv' could not be started: it exited with code 3 before answering", "app",
        "--- its stderr (last lines) ---\nboom\u202e",
    )  # fmt: skip
    fine = ActivityRecord(1_700_000_001.0, "main", "x", "x#1", "m", "echo", 3.0, "ok", 20)
    view.add([failed, fine])
    assert view.selected.toPlainText() == ""
    view.table.selectRow(1)  # newest first: the failure is the second row
    text = view.selected.toPlainText()
    assert "Board (x), app, in workspace main (x#1)" in text
    assert "m · echo: unavailable" in text and "exited with code 3" in text
    assert "What the extension did not see:\n--- its stderr (last lines) ---\nboom[U+202E]" in text
    view.table.selectRow(0)
    assert "m · echo: ok" in view.selected.toPlainText()
    assert "did not see" not in view.selected.toPlainText()
