"""Activity: what each extension did — every call, reads included, newest first.

Each row is one finished call (``broker.activity``): its local time, the extension, the
connection and operation, how long it took, its outcome and the size of what it returned.
Filters narrow the list by extension, connection and outcome; beside it, a live count of each
extension's calls (and failures) since Helm started. The list holds at most ``KEEP`` calls;
older ones stay in the log on disk until it is rotated. Under the list, the selected call in
full: Helm's message and, for a failure that has one, what only the user sees (a server's
last stderr lines), which is never in the log on disk.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from broker.activity import KEEP, Activity, ActivityRecord
from ui.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QColor,
    QComboBox,
    QEvent,
    QHBoxLayout,
    QHeaderView,
    QModelIndex,
    QPersistentModelIndex,
    QShowEvent,
    QSortFilterProxyModel,
    QSplitter,
    Qt,
    QTableView,
    QTableWidget,
    QTableWidgetItem,
    QTimer,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, plain_box, plain_label, set_plain, visible
from ui.theme import Theme
from ui.when import duration, full_local_time, local_time, size

Names = Callable[[str, str], str]
"""(workspace, extension id) → the extension's name, for people."""

COLUMNS = ("Time", "Extension", "Connection", "Operation", "Duration", "Outcome", "Returned", "Workspace")
ALL, FAILED = "", "\x00failed"
Index = QModelIndex | QPersistentModelIndex


class ActivityTable(QAbstractTableModel):
    """The calls, newest first, at most ``keep`` of them."""

    def __init__(self, names: Names, keep: int = KEEP, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.names, self.keep = names, keep
        self.records: deque[ActivityRecord] = deque()
        self._shown: set[ActivityRecord] = set()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def record(self, row: int) -> ActivityRecord:
        return self.records[len(self.records) - 1 - row]

    def data(self, index: Index, role: int = 0) -> Any:
        if not index.isValid():
            return None
        r = self.record(index.row())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(r, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(r, index.column())
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in (4, 6):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 5 and not r.ok:
            return QColor(Theme.of().look.colours.danger)
        return None

    def _text(self, r: ActivityRecord, column: int) -> str:
        values = (
            local_time(r.time), self.names(r.workspace, r.extension), r.connection, r.operation,
            duration(r.duration_ms), r.outcome, size(r.bytes), r.workspace,
        )  # fmt: skip
        return elide(values[column], 80)

    def _tip(self, r: ActivityRecord, column: int) -> str:
        if column == 0:
            return full_local_time(r.time)
        if column == 1:
            return visible(f"{r.extension} in workspace {r.workspace} ({r.instance})")
        if column == 5 and r.message:
            return elide(r.message, 600)
        return ""

    def add(self, records: Iterable[ActivityRecord]) -> None:
        """Add calls (oldest first); a call already shown is not shown twice."""
        new = [r for r in dict.fromkeys(records) if r not in self._shown][-self.keep :]
        if not new:
            return
        self.beginInsertRows(QModelIndex(), 0, len(new) - 1)
        self.records.extend(new)
        self._shown.update(new)
        self.endInsertRows()
        extra = len(self.records) - self.keep
        if extra > 0:
            self.beginRemoveRows(QModelIndex(), self.keep, self.keep + extra - 1)
            for _ in range(extra):
                self._shown.discard(self.records.popleft())
            self.endRemoveRows()


class ActivityFilter(QSortFilterProxyModel):
    """Rows of one extension, connection and outcome (``ALL`` lets every value through)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.extension = self.connection = self.outcome = ALL

    def set(self, *, extension: str, connection: str, outcome: str) -> None:
        self.beginFilterChange()
        self.extension, self.connection, self.outcome = extension, connection, outcome
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, row: int, parent: Index) -> bool:
        table = self.sourceModel()
        if not isinstance(table, ActivityTable):
            return True
        r = table.record(row)
        if self.extension and r.extension != self.extension:
            return False
        if self.connection and r.connection != self.connection:
            return False
        if self.outcome == FAILED:
            return not r.ok
        return not self.outcome or r.outcome == self.outcome


NO_CALLS = (
    "No calls yet. Each call a widget or tool makes appears here as it happens: open the "
    "Dashboard, or install an extension (Ctrl+K)."
)


class ActivityView(QWidget):
    """The Activity page of the main window."""

    def __init__(self, activity: Activity, names: Names, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.activity, self.names = activity, names
        self.setAccessibleName("Activity")
        self.table_model = ActivityTable(names, parent=self)
        self.filtered = ActivityFilter(self)
        self.filtered.setSourceModel(self.table_model)
        col = QVBoxLayout(self)
        col.addWidget(plain_label("Every call of every extension, newest first.", self, wrap=False))
        col.addLayout(self._filters())
        split = QSplitter(self)
        split.addWidget(self._table())
        split.addWidget(self._counts())
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([700, 260])
        col.addWidget(split, 1)
        self.selected = plain_box("", self, max_lines=10, name="The selected call")
        self.selected.setPlaceholderText("Select a call to see all of it here.")
        self._fit_selected()
        col.addWidget(self.selected)
        self.table.selectionModel().currentRowChanged.connect(lambda now, _before: self._show_selected(now))
        self.shown = plain_label("", self)
        col.addWidget(self.shown)
        self.loaded = False

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the text size changed in Preferences
            # Once the tables have their new font too (they get it after this page).
            QTimer.singleShot(0, self, self._fit_rows)

    def _fit_rows(self) -> None:
        _compact(self.table)
        _compact(self.counts)
        self._fit_selected()

    def _fit_selected(self) -> None:
        height = self.selected.fontMetrics().lineSpacing() * 7 + 12  # a failure's detail, at a glance
        self.selected.setMinimumHeight(height)
        self.selected.setMaximumHeight(height)

    def showEvent(self, event: QShowEvent) -> None:
        # The log on disk is read when the page is first looked at, not at start-up.
        if not self.loaded:
            self.loaded = True
            self.add(self.activity.history())
        super().showEvent(event)

    def _filters(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.addWidget(plain_label("Show", self, wrap=False))
        self.filters: dict[str, QComboBox] = {}
        for key, everything in (
            ("extension", "All extensions"), ("connection", "All connections"), ("outcome", "All outcomes")
        ):  # fmt: skip
            box = QComboBox(self)
            box.setAccessibleName(f"Show the calls of one {key}")
            box.addItem(everything, ALL)
            if key == "outcome":
                box.addItem("Failed (anything but ok)", FAILED)
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(12)
            box.currentIndexChanged.connect(lambda _i: self.refilter())
            bar.addWidget(box, 1)
            self.filters[key] = box
        bar.addStretch(1)
        return bar

    def _table(self) -> QTableView:
        self.table = QTableView(self)
        self.table.setAccessibleName("Calls")
        self.table.setModel(self.filtered)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        _compact(self.table)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        return self.table

    def _counts(self) -> QTableWidget:
        self.counts = QTableWidget(0, 3, self)
        self.counts.setAccessibleName("Calls per extension since Helm started")
        self.counts.setHorizontalHeaderLabels(["Extension", "Calls", "Failed"])
        self.counts.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        _compact(self.counts)
        header = self.counts.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.counts.setToolTip(f"Since Helm started ({full_local_time(self.activity.since)})")
        return self.counts

    def _show_selected(self, index: Index) -> None:
        if not index.isValid():
            self.selected.clear()
            return
        row = self.filtered.mapToSource(self.filtered.index(index.row(), 0)).row()
        self.selected.setPlainText(visible(describe(self.table_model.record(row), self.names)))

    # -- new calls -------------------------------------------------------------------------
    def add(self, records: Iterable[ActivityRecord]) -> None:
        """Show calls that ended (the main window passes each batch of the feed)."""
        records = list(records)
        self.table_model.add(records)
        for record in records:
            self._offer("extension", record.extension, self.names(record.workspace, record.extension))
            self._offer("connection", record.connection, record.connection)
            self._offer("outcome", record.outcome, record.outcome)
        self._show_counts()
        self._show_total()

    def _offer(self, key: str, value: str, text: str) -> None:
        box = self.filters[key]
        if box.findData(value) < 0:
            box.addItem(elide(text, 60), value)

    def _show_counts(self) -> None:
        rows = sorted(self.activity.counts.items(), key=lambda kv: -kv[1].calls)
        self.counts.setRowCount(len(rows))
        for r, ((workspace, extension), count) in enumerate(rows):
            name = QTableWidgetItem(elide(self.names(workspace, extension), 60))
            name.setToolTip(visible(f"{extension} in workspace {workspace}"))
            self.counts.setItem(r, 0, name)
            for c, value in ((1, count.calls), (2, count.failed)):
                item = QTableWidgetItem(str(value))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.counts.setItem(r, c, item)

    def refilter(self) -> None:
        f = self.filters
        self.filtered.set(
            extension=str(f["extension"].currentData() or ""),
            connection=str(f["connection"].currentData() or ""),
            outcome=str(f["outcome"].currentData() or ""),
        )
        self._show_total()

    def _show_total(self) -> None:
        total, shown = self.table_model.rowCount(), self.filtered.rowCount()
        text = f"{total} call(s)" if shown == total else f"{shown} of {total} call(s)"
        if total == 0:
            text = NO_CALLS
        set_plain(self.shown, text)


def describe(r: ActivityRecord, names: Names) -> str:
    """All of one call, for the box under the list: when, who, what, how it ended, Helm's
    message and, for a failure that has one, what only the user sees (a server's last stderr
    lines, its secrets already removed)."""
    lines = [
        f"{full_local_time(r.time)} — {names(r.workspace, r.extension)} ({r.extension}), "
        f"{r.requester}, in workspace {r.workspace} ({r.instance})",
        f"{r.connection} · {r.operation}: {r.outcome} in {duration(r.duration_ms)}, returned {size(r.bytes)}",
    ]
    if r.message:
        lines.append(r.message)
    if r.detail:
        lines += ["", "What the extension did not see:", r.detail]
    return "\n".join(lines)


def _compact(table: QTableView) -> None:
    """One line of text per row, rows as high as the text; arrows move between cells and Tab
    leaves the table."""
    table.setTabKeyNavigation(False)
    table.verticalHeader().hide()
    table.setWordWrap(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
