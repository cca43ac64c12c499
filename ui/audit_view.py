"""The audit log of write decisions and redactions, newest first, filtered by decision."""

from __future__ import annotations

from collections.abc import Iterable

from broker.audit import AuditLog, AuditRecord
from ui.qt import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, plain_label, set_plain

COLUMNS = (
    ("time", "Time"),
    ("decision", "Decision"),
    ("outcome", "Outcome"),
    ("workspace", "Workspace"),
    ("extension", "Extension"),
    ("connection", "Connection"),
    ("kind", "Kind"),
    ("operation", "Operation"),
    ("title", "Dialog"),
)
DECISIONS = ("all", "confirmed", "declined", "expired", "refused", "redacted")


def rows(records: Iterable[AuditRecord], decision: str = "all") -> list[AuditRecord]:
    """The records to show: newest first, only ``decision`` unless it is "all"."""
    chosen = [r for r in records if decision == "all" or r.decision == decision]
    return sorted(chosen, key=lambda r: r.time, reverse=True)


class AuditView(QWidget):
    def __init__(self, log: AuditLog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log = log
        self.setWindowTitle("Audit log — write decisions and redactions")
        self.resize(1000, 500)
        layout = QVBoxLayout(self)
        bar = QHBoxLayout()
        bar.addWidget(plain_label("Show", self, wrap=False))
        self.filter = QComboBox(self)
        self.filter.addItems(list(DECISIONS))
        self.filter.currentTextChanged.connect(lambda _t: self.refresh())
        bar.addWidget(self.filter)
        bar.addStretch(1)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.clicked.connect(self.refresh)
        bar.addWidget(self.refresh_button)
        layout.addLayout(bar)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels([label for _key, label in COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        layout.addWidget(self.table, 1)
        self.count = plain_label("", self)
        layout.addWidget(self.count)
        self.refresh()

    def refresh(self) -> None:
        shown = rows(self.log.records(), self.filter.currentText())
        self.table.setRowCount(len(shown))
        for r, record in enumerate(shown):
            for c, (key, _label) in enumerate(COLUMNS):
                self.table.setItem(r, c, QTableWidgetItem(elide(str(getattr(record, key)), 120)))
        self.table.resizeColumnsToContents()
        set_plain(self.count, f"{len(shown)} decision(s)")
