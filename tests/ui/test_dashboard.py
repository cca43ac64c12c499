"""The dashboard's grid on a real home: it fits the window, moves and resizes by mouse and
keyboard, keeps its layout per workspace, and tool tabs come back after a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from broker.extensions import install, review_and_approve
from broker.workspaces import add_workspace
from tests.ui.dashboard_kit import Frames, home_with, manifest, open_main_window, settle
from ui.dashboard import Dashboard, WidgetCard
from ui.dashboard_card import DragHandle
from ui.dashboard_layout import GAP, Span
from ui.frame_spec import FrameSpec
from ui.main_window import MainWindow
from ui.qt import QObject, QPoint, QSize, Qt, Signal

WIDGETS = [manifest(f"com.example.w{i}", f"Widget {i}") for i in range(1, 5)]
EDITOR = manifest("com.example.editor", "Editor", "tool")


def ids(dashboard: Dashboard) -> list[str]:
    return [c.frame.manifest.id for c in dashboard.cards]


def card(dashboard: Dashboard, ext_id: str) -> WidgetCard:
    return next(c for c in dashboard.cards if c.frame.manifest.id == ext_id)


def stored(tmp_path: Path) -> Any:
    return json.loads((tmp_path / "home" / "layout.json").read_text("utf-8"))


def fits(dashboard: Dashboard) -> bool:
    width = dashboard.viewport().width()
    return all(c.geometry().left() >= 0 and c.geometry().right() < width for c in dashboard.cards)


def test_four_widgets_fit_the_window_and_it_never_scrolls_sideways(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, WIDGETS))
    window = open_main_window(qtbot, broker, size=(1400, 800))
    dash = window.dashboard
    qtbot.waitUntil(lambda: dash.columns >= 3, timeout=3000)
    assert fits(dash)
    assert all(c.geometry().bottom() < dash.viewport().height() for c in dash.cards)  # all on screen
    assert dash.horizontalScrollBar().maximum() == 0
    window.resize(600, 800)
    qtbot.waitUntil(lambda: dash.columns == 1, timeout=3000)
    settle(qtbot, window)
    assert fits(dash)
    assert dash.horizontalScrollBar().maximum() == 0
    lefts = {c.geometry().left() for c in dash.cards}
    assert len(lefts) == 1  # one column: the widgets stack and the page scrolls down
    run(broker.aclose())


def test_a_size_hint_sets_where_a_widget_starts_and_how_small_it_may_become(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    large = manifest("com.example.large", "Large", size="large")
    tall = manifest("com.example.tall", "Tall", size={"minWidth": 500, "minHeight": 350})
    broker = run(home_with(tmp_path, [large, tall]))
    window = open_main_window(qtbot, broker, size=(1500, 800))
    dash = window.dashboard
    assert dash.spans == {"com.example.large": Span(2, 5), "com.example.tall": Span(2, 4)}
    tall_card = card(dash, "com.example.tall")
    tall_card.handle.setFocus()
    qtbot.keyClick(
        tall_card.handle,
        Qt.Key.Key_Left,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    qtbot.keyClick(
        tall_card.handle,
        Qt.Key.Key_Up,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert dash.spans["com.example.tall"] == Span(2, 4)  # not below the manifest's minimum
    assert tall_card.geometry().width() >= 500 and tall_card.geometry().height() >= 350
    run(broker.aclose())


def drag(qtbot: QtBot, moving: WidgetCard, onto: WidgetCard) -> None:
    handle = moving.handle
    start = handle.rect().center()
    target = handle.mapFromGlobal(onto.mapToGlobal(onto.rect().center()))
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(handle, start + QPoint(20, 20))
    qtbot.mouseMove(handle, target)
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=target)


def test_dragging_a_widget_onto_another_moves_it_there_and_a_restart_keeps_the_order(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, WIDGETS))
    window = open_main_window(qtbot, broker)
    dash = window.dashboard
    before = ids(dash)
    drag(qtbot, dash.cards[0], dash.cards[2])
    assert ids(dash) == [before[1], before[2], before[0], before[3]]
    assert fits(dash)
    assert [w["id"] for w in stored(tmp_path)["workspaces"]["main"]["widgets"]] == ids(dash)
    window.close()
    again = open_main_window(qtbot, broker)
    assert ids(again.dashboard) == [before[1], before[2], before[0], before[3]]
    run(broker.aclose())


def next_handle(card: WidgetCard) -> object:
    """The first drag handle Tab reaches after ``card``'s own controls."""
    widget = card.handle.nextInFocusChain()
    while widget is not None and not (
        isinstance(widget, DragHandle) and widget.focusPolicy() != Qt.FocusPolicy.NoFocus
    ):
        widget = widget.nextInFocusChain()
    return widget


def test_the_keyboard_moves_and_resizes_a_widget(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    broker = run(home_with(tmp_path, WIDGETS))
    window = open_main_window(qtbot, broker, size=(1500, 800))
    dash = window.dashboard
    first = dash.cards[0]
    first_id = first.frame.manifest.id
    first.handle.setFocus()
    ctrl, shift = Qt.KeyboardModifier.ControlModifier, Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(first.handle, Qt.Key.Key_Right, ctrl)
    assert ids(dash).index(first_id) == 1
    assert window.focusWidget() is first.handle  # the focus stays with the widget that moved
    assert next_handle(dash.cards[0]) is first.handle  # Tab follows the grid's order
    width, height = first.width(), first.height()
    qtbot.keyClick(first.handle, Qt.Key.Key_Right, ctrl | shift)
    qtbot.keyClick(first.handle, Qt.Key.Key_Down, ctrl | shift)
    assert dash.spans[first_id] == Span(2, 4)
    assert first.width() > width and first.height() > height
    saved = {w["id"]: (w["cols"], w["rows"]) for w in stored(tmp_path)["workspaces"]["main"]["widgets"]}
    assert saved[first_id] == (2, 4)
    menu = first.layout_button.menu()
    assert menu is not None
    assert [a.text() for a in menu.actions()][:2] == ["Move earlier", "Move later"]
    assert first.layout_actions["reset"].shortcut().toString() == "Ctrl+Shift+0"
    first.layout_actions["reset"].trigger()
    assert dash.spans[first_id] == Span(1, 3)
    run(broker.aclose())


def test_dragging_the_corner_grip_resizes_the_widget_in_whole_cells(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, WIDGETS))
    window = open_main_window(qtbot, broker, size=(1500, 800))
    dash = window.dashboard
    first = dash.cards[0]
    grip = first.grip
    origin = grip.mapToGlobal(grip.rect().center())
    step = int(dash.column_width()) + 8

    def at(dx: int, dy: int) -> QPoint:  # the pointer's place on the screen, as the grip moves
        return grip.mapFromGlobal(origin + QPoint(dx, dy))

    qtbot.mousePress(grip, Qt.MouseButton.LeftButton, pos=at(0, 0))
    qtbot.mouseMove(grip, at(step // 2, 0))
    qtbot.mouseMove(grip, at(step, 215))
    qtbot.mouseRelease(grip, Qt.MouseButton.LeftButton, pos=at(step, 215))
    assert dash.spans[first.frame.manifest.id] == Span(2, 5)
    assert fits(dash)
    assert stored(tmp_path)["workspaces"]["main"]["widgets"][0] == {
        "id": first.frame.manifest.id, "cols": 2, "rows": 5
    }  # fmt: skip
    run(broker.aclose())


def test_each_workspace_keeps_its_own_layout(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    broker = run(home_with(tmp_path, WIDGETS))
    add_workspace(broker.home, "other", tmp_path / "root")
    for raw in WIDGETS:
        install(broker.home, "other", tmp_path / "ext" / raw["id"])
        run(review_and_approve(broker, "other", raw["id"]))
    window = open_main_window(qtbot, broker)
    dash = window.dashboard
    dash.move_widget("com.example.w4", 0)
    dash.layoutChanged.emit(dash.saved())
    window.workspace_box.setCurrentText("other")
    assert ids(dash)[0] == "com.example.w1"
    window.workspace_box.setCurrentText("main")
    assert ids(dash)[0] == "com.example.w4"
    run(broker.aclose())


def test_a_damaged_layout_file_is_reported_kept_as_it_is_and_the_dashboard_still_works(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, WIDGETS))
    damaged = tmp_path / "home" / "layout.json"
    damaged.write_text('{"version": 1, "workspaces": {"main": {"widgets": [{"id": 3}]}}', encoding="utf-8")
    window = open_main_window(qtbot, broker)
    assert "layout file" in window.notice.text() and "left it as it is" in window.notice.text()
    first = window.dashboard.cards[0]
    first.handle.setFocus()
    qtbot.keyClick(first.handle, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert ids(window.dashboard).index(first.frame.manifest.id) == 1  # works for this session
    assert damaged.read_text("utf-8").startswith(
        '{"version": 1, "workspaces": {"main": {"widgets": [{"id": 3}]}}'
    )
    run(broker.aclose())


def test_tool_tabs_that_were_open_open_again_after_a_restart(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    viewer = manifest("com.example.viewer", "Viewer", "tool")
    broker = run(home_with(tmp_path, [*WIDGETS[:1], EDITOR, viewer]))
    frames = Frames()
    window = open_main_window(qtbot, broker, frames)
    for tool in ("Editor", "Viewer"):
        row = next(r for r in window.model.extensions("main") if r.name == tool)
        assert row.manifest is not None
        window.open_tool(FrameSpec("main", row.manifest, f"{row.id}#tool"))
    window.tabs.setCurrentWidget(window.tools["com.example.editor"])
    assert stored(tmp_path)["workspaces"]["main"]["tabs"] == ["com.example.editor", "com.example.viewer"]
    window.close()
    again = open_main_window(qtbot, broker, frames)
    assert list(again.tools) == ["com.example.editor", "com.example.viewer"]
    assert again.tabs.currentWidget() is again.tools["com.example.editor"]
    assert frames.made[-1].instance in ("com.example.editor#tool", "com.example.viewer#tool")
    again.close_tab(again.tabs.indexOf(again.tools["com.example.viewer"]))
    again.close()
    third = open_main_window(qtbot, broker, frames)
    assert list(third.tools) == ["com.example.editor"]
    run(broker.aclose())


def test_a_tool_that_may_no_longer_run_is_not_reopened(qtbot: QtBot, run: Any, tmp_path: Path) -> None:
    broker = run(home_with(tmp_path, [EDITOR]))
    window = open_main_window(qtbot, broker)
    window.tree.setCurrentItem(
        window.tree.findItems("Editor", Qt.MatchFlag.MatchStartsWith | Qt.MatchFlag.MatchRecursive)[0]
    )
    window.open_selected()
    assert "com.example.editor" in window.tools
    window.toggle_selected()  # disabled: its tab closes
    assert "com.example.editor" not in window.tools
    window.close()
    again: MainWindow = open_main_window(qtbot, broker)
    assert not again.tools
    run(broker.aclose())


def test_switching_workspaces_brings_back_each_ones_open_tools(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, [EDITOR]))
    add_workspace(broker.home, "other", tmp_path / "root")
    window = open_main_window(qtbot, broker)
    row = window.model.row("main", "com.example.editor")
    assert row is not None and row.manifest is not None
    window.open_tool(FrameSpec("main", row.manifest, "com.example.editor#tool"))
    window.workspace_box.setCurrentText("other")
    assert not window.tools
    window.workspace_box.setCurrentText("main")
    assert list(window.tools) == ["com.example.editor"]
    assert window.tabs.currentWidget() is window.tools["com.example.editor"]
    run(broker.aclose())


class SizedFrames(Frames):
    """Frames that say how tall their content is, as an MCP App's frame does."""

    def __call__(self, frame: FrameSpec, parent: Any) -> Any:
        view = super().__call__(frame, parent)
        self.last = Reporting(view)
        return self.last.view


class Reporting(QObject):
    sizeReported = Signal(object)

    def __init__(self, view: Any) -> None:
        super().__init__(view)
        self.view = view
        view.sizeReported = self.sizeReported


def test_a_widget_nobody_sized_grows_to_the_size_its_content_reports_and_the_users_size_wins(
    qtbot: QtBot, run: Any, tmp_path: Path
) -> None:
    broker = run(home_with(tmp_path, WIDGETS[:1]))
    frames = SizedFrames()
    window = open_main_window(qtbot, broker, frames, size=(1900, 800))
    dash = window.dashboard
    card = dash.cards[0]
    ext_id = card.frame.manifest.id
    start = dash.spans[ext_id]
    content, column = card.view.width(), card.width()
    frames.last.sizeReported.emit(QSize(content, 520))  # the width it has, as the SDK says
    grown = dash.spans[ext_id]
    frames.last.sizeReported.emit(QSize(300, 100))
    kept = dash.spans[ext_id]
    frames.last.sizeReported.emit(QSize(2 * content, -1))
    wider = dash.spans[ext_id]
    frames.last.sizeReported.emit(QSize(2 * column + 2 * GAP, -1))
    widest = dash.spans[ext_id]
    frames.last.sizeReported.emit(QSize(4096, 4096))
    bounded = dash.spans[ext_id]
    dash.resize_widget(ext_id, Span(1, 2))
    dash._changed(dash.cards[0])  # as the user's own sizing does
    frames.last.sizeReported.emit(QSize(2000, 900))
    assert start.rows < grown.rows <= 10 and grown.cols == start.cols == 1
    assert kept == grown, "a smaller report never shrinks it"
    assert wider == Span(2, grown.rows), "twice its content's width fits two columns"
    assert widest == Span(3, grown.rows), "more than two columns and their gap: three"
    assert bounded == Span(4, 10), "at most the columns shown (four) and ten rows"
    assert dash.spans[ext_id] == Span(1, 2), "once the user sized it, the content does not"
    run(broker.aclose())
