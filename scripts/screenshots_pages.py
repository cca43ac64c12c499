"""The screens of the dashboard, the kill switch, the activity and the audit log's detail.

Used by ``screenshots.py`` on its sample home: placeholder frames, real calls through the
broker (reads, a refusal, a confirmed and a declined write), so every list shows real records.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from broker.broker import Broker
from broker.context import CallContext
from broker.summary import Decision, WriteSummary
from ui import extension_tree
from ui.audit_view import AuditView
from ui.dashboard_layout import Span
from ui.main_window import MainWindow
from ui.qt import QWidget

Save = Callable[[QWidget, Path, str, tuple[int, int] | None], Awaitable[Path]]


class Answer:
    """The user's answer to a write's dialog, given at once."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision

    async def __call__(self, summary: WriteSummary) -> Decision:
        return self.decision


async def dashboard_screens(out: Path, window: MainWindow, save: Save) -> list[Path]:
    """The grid after the user moved and resized widgets; the Layout menu; the kill switch."""
    dash = window.dashboard
    dash.resize_widget("com.example.board", Span(2, 4))
    dash.move_widget("com.example.notes", 0)
    written = [await save(window, out, "dashboard-moved-and-resized", (1280, 760))]
    menu = dash.cards[0].layout_button.menu()
    assert menu is not None
    menu.popup(dash.cards[0].layout_button.mapToGlobal(dash.cards[0].layout_button.rect().bottomLeft()))
    written.append(await save(menu, out, "dashboard-layout-menu", None))
    menu.hide()
    broker = window.model.broker
    window.model.stop("main", "com.example.notes")
    window.model.stop("main", "com.example.board", "tools")
    notes = CallContext("main", "com.example.notes", dash.cards[0].frame.instance)
    await broker.call(notes, "notes", "list", {})
    window.feed.deliver()
    window.show_workspace_quietly("main")
    window.dashboard.heard(list(broker.activity.recent))
    item = extension_tree.find(window.tree, "com.example.board", "tools")
    if item is not None:
        window.tree.setCurrentItem(item)
    written.append(await save(window, out, "dashboard-stopped-and-error-strip", (1280, 760)))
    return written


async def activity_screens(out: Path, window: MainWindow, broker: Broker, save: Save) -> list[Path]:
    """The Activity page after real calls: reads, a write, refusals and a query."""
    board = CallContext("main", "com.example.board", "com.example.board#dashboard")
    clock = CallContext("main", "com.example.clock", "com.example.clock#dashboard")
    for _ in range(3):
        await broker.call(clock, "notes", "list", {})
    await broker.call(board, "app", "recent", {"limit": 5})
    await broker.call(board, "notes", "read", {"path": "notes/today.md"})
    await broker.call(board, "notes", "read", {"path": "../secrets.md"})
    await broker.call(board, "app", "drop_tables", {})
    await broker.request(board, "app", "close", {"id": 1}, Answer(Decision.CONFIRMED))
    await broker.request(board, "app", "close", {"id": 2}, Answer(Decision.DECLINED))
    window.feed.deliver()
    window.tabs.setCurrentWidget(window.activity)
    written = [await save(window, out, "activity", (1280, 760))]
    outcome = window.activity.filters["outcome"]
    outcome.setCurrentIndex(outcome.findText("Failed (anything but ok)"))
    written.append(await save(window, out, "activity-failed-only", (1280, 760)))
    window.activity.table.selectRow(0)  # the newest failure, in full under the list
    written.append(await save(window, out, "activity-selected", (1280, 760)))
    window.activity.table.clearSelection()
    outcome.setCurrentIndex(0)
    audit = AuditView(broker.audit)
    audit.outcome_filter.setCurrentIndex(audit.outcome_filter.findData("ok"))
    audit.table.setCurrentCell(0, 0)
    written.append(await save(audit, out, "audit-log-detail", (1100, 620)))
    window.tabs.setCurrentWidget(window.dashboard)
    return written
