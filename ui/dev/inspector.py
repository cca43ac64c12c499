"""The call inspector of ``helm dev``: every call the page makes, as the broker answered it.

``ObservedHandler`` sits between the bridge and the broker (it is a ``CallHandler`` itself,
so neither needs to know it exists) and reports a ``CallRecord`` per call. The duration is
the whole call as the page waits for it, including the time a write's confirmation dialog
stays open. ``CallInspector`` lists the records and copies one, or all, as JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from broker.context import CallContext
from broker.summary import Confirmer
from ui.host.bridge import CallHandler
from ui.host.clipboard import copy_text
from ui.qt import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import monospace, visible

MAX_RECORDS = 500
"""The inspector keeps the most recent calls only, so a chatty page cannot grow it forever."""


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text  # shown as the page sent it


@dataclass(frozen=True)
class CallRecord:
    """One call: who, what, how long, and the envelope the page received."""

    at: str
    instance: str
    connection: str
    operation: str
    args: Any
    duration_ms: float
    envelope: Any
    hints: tuple[str, ...] = ()
    """What author mode points out about the call (``broker.authoring.hints``)."""

    @property
    def ok(self) -> bool:
        return isinstance(self.envelope, dict) and self.envelope.get("ok") is True

    @property
    def error_code(self) -> str | None:
        error = self.envelope.get("error") if isinstance(self.envelope, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        return str(code) if code is not None else None

    @property
    def error_message(self) -> str:
        error = self.envelope.get("error") if isinstance(self.envelope, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        return message if isinstance(message, str) else ""

    def as_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "instance": self.instance,
            "connection": self.connection,
            "operation": self.operation,
            "args": self.args,
            "durationMs": round(self.duration_ms, 1),
            "errorCode": self.error_code,
            "envelope": self.envelope,
            "hints": list(self.hints),
        }


class ObservedHandler:
    """A ``CallHandler`` that passes every call on and reports what came back."""

    def __init__(self, inner: CallHandler, report: Callable[[CallRecord], None]) -> None:
        self._inner = inner
        self._report = report

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        at = datetime.now().astimezone().isoformat(timespec="milliseconds")
        started = time.perf_counter()
        result = await self._inner.request_json(ctx, connection_id, operation, args_json, confirm)
        elapsed = (time.perf_counter() - started) * 1000
        self._report(
            CallRecord(
                at=at,
                instance=ctx.instance,
                connection=connection_id,
                operation=operation,
                args=_json_or_text(args_json),
                duration_ms=elapsed,
                envelope=_json_or_text(result),
            )
        )
        return result


COLUMNS = ("Time", "Connection", "Operation", "Arguments", "Duration", "Result")


def _cells(record: CallRecord) -> tuple[str, ...]:
    args = json.dumps(record.args, ensure_ascii=False, separators=(",", ":"))
    result = "ok" if record.ok else (record.error_code or "?")
    if record.hints:
        result += f" ⚠ {len(record.hints)} hint(s)"
    return (
        record.at[11:23],
        record.connection,
        record.operation,
        args if len(args) <= 120 else args[:119] + "…",
        f"{record.duration_ms:.0f} ms",
        result,
    )


class CallInspector(QWidget):
    """A table of calls, the selected call in full, and buttons to copy it as JSON."""

    recorded = Signal(object)
    """A ``CallRecord`` was added."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.records: list[CallRecord] = []
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.detail = QPlainTextEdit(self)
        self.detail.setReadOnly(True)
        self.detail.setFont(monospace())
        self.detail.setPlaceholderText("Select a call to see its arguments and envelope.")
        self.copy_button = QPushButton("Copy call as JSON", self)
        self.copy_all_button = QPushButton("Copy all", self)
        self.clear_button = QPushButton("Clear", self)
        self.copy_button.clicked.connect(self.copy_selected)
        self.copy_all_button.clicked.connect(self.copy_all)
        self.clear_button.clicked.connect(self.clear)
        self.count = QLabel("No calls yet", self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.count, 1)
        for button in (self.copy_button, self.copy_all_button, self.clear_button):
            buttons.addWidget(button)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(split, 1)

    def add(self, record: CallRecord) -> None:
        if len(self.records) >= MAX_RECORDS:
            self.records.pop(0)
            self.table.removeRow(0)
        self.records.append(record)
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, text in enumerate(_cells(record)):
            # QTableWidgetItem shows plain text: a connection's data cannot become markup here.
            item = QTableWidgetItem(visible(text))
            if col == 5 and not record.ok:
                item.setForeground(Qt.GlobalColor.darkRed)
            if col == 5 and record.hints:
                item.setToolTip(visible("\n".join(record.hints)))
            self.table.setItem(row, col, item)
        self.table.scrollToBottom()
        self.count.setText(f"{len(self.records)} call(s)")
        self.recorded.emit(record)

    def selected(self) -> CallRecord | None:
        rows = self.table.selectionModel().selectedRows()
        return self.records[rows[0].row()] if rows else None

    def select(self, index: int) -> None:
        self.table.selectRow(index)

    def copy_selected(self) -> None:
        record = self.selected() or (self.records[-1] if self.records else None)
        if record is not None:
            _copy(json.dumps(record.as_json(), indent=2, ensure_ascii=False))

    def copy_all(self) -> None:
        _copy(json.dumps([r.as_json() for r in self.records], indent=2, ensure_ascii=False))

    def clear(self) -> None:
        self.records.clear()
        self.table.setRowCount(0)
        self.detail.clear()
        self.count.setText("No calls yet")

    def _show_selected(self) -> None:
        record = self.selected()
        if record is not None:
            self.detail.setPlainText(json.dumps(record.as_json(), indent=2, ensure_ascii=False))


def _copy(text: str) -> None:
    copy_text(text)  # Helm's own copy: not taken for a frame's
