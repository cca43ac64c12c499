"""The audit log: write decisions, redactions and pins, newest first, in local time.

Filters narrow it by decision, extension and outcome. Selecting a record shows what the dialog
showed — its title, the labels of its fields and the digest of the exact request — and who
asked, through what, with what outcome. The log never holds argument values, so neither does
this window: the digest identifies the request. When the records are also exported
(``broker.export``), a line under the filters says where to and how each sink is doing: up or
down, how many records wait, how many it had to drop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from broker.audit import AuditLog, AuditRecord
from broker.export import SinkStatus
from ui.qt import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QSplitter,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, monospace, plain_label, set_plain, visible
from ui.when import full_local_time_of, local_time_of

COLUMNS = (
    ("time", "Time"),
    ("decision", "Decision"),
    ("outcome", "Outcome"),
    ("extension", "Extension"),
    ("connection", "Connection"),
    ("operation", "Operation"),
    ("title", "Dialog"),
)
DECISIONS = ("confirmed", "declined", "expired", "refused", "cancelled", "redacted", "pinned")
ALL_DECISIONS = "All decisions"
ALL = ""
NOT_KEPT = "values are not kept (they can hold personal data); the digest identifies them"


def rows(
    records: Iterable[AuditRecord], decision: str = ALL, extension: str = ALL, outcome: str = ALL
) -> list[AuditRecord]:
    """The records to show: newest first, only those that pass every filter (``ALL`` lets
    every value through)."""
    chosen = [
        r
        for r in records
        if (not decision or r.decision == decision)
        and (not extension or r.extension == extension)
        and (not outcome or r.outcome == outcome)
    ]
    return sorted(chosen, key=lambda r: r.time, reverse=True)


def details(record: AuditRecord) -> list[tuple[str, str]]:
    """What the detail pane shows for one record, as (label, text) pairs."""
    when = full_local_time_of(record.time)
    shown = ", ".join(record.fields) if record.fields else "—"
    pairs = [
        ("When", when),
        ("Decision", record.decision),
        ("Outcome", record.outcome),
        ("Workspace", record.workspace or "—"),
        ("Extension", record.extension or "—"),
        ("Asked by", record.who),
        ("Connection", f"{record.connection} ({record.kind})"),
        ("Operation", record.operation),
        ("Dialog title", record.title or "—"),
        ("Fields shown", f"{shown} — {NOT_KEPT}" if record.fields else shown),
        ("Request digest", record.request_digest or "—"),
    ]
    pairs += [
        (label, value)
        for label, value in (
            ("File", record.file),
            ("Decision id", record.decision_id),
            ("Reason", record.reason),
            ("Decision point", record.point_verdict),
            ("Its decision id", record.point_decision_id),
            ("Its receipt id", record.point_receipt_id),
        )
        if value
    ]
    return pairs


def export_text(statuses: Iterable[SinkStatus]) -> str:
    """The export line: each sink in effect and how it is doing ("" when there is none)."""
    lines = [s.line() for s in statuses]
    return "Exported — " + "; ".join(lines) if lines else ""


class AuditView(QWidget):
    def __init__(
        self,
        log: AuditLog,
        parent: QWidget | None = None,
        export: Callable[[], list[SinkStatus]] | None = None,
    ) -> None:
        """``export``: the audit export's status (``AuditExporter.status``), shown when given."""
        super().__init__(parent)
        self.log = log
        self.export = export
        self.shown: list[AuditRecord] = []
        self.setWindowTitle("Audit log — write decisions and redactions")
        self.setAccessibleName("Audit log")
        self.resize(1100, 560)
        layout = QVBoxLayout(self)
        layout.addLayout(self._filters())
        self.export_line = plain_label("", self)
        self.export_line.setAccessibleName("Audit export")
        layout.addWidget(self.export_line)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self._table())
        self.detail = QWidget(split)
        self.detail.setAccessibleName("The selected decision")
        self.detail_form = QFormLayout(self.detail)
        self.detail_form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout.addWidget(split, 1)
        self.count = plain_label("", self)
        layout.addWidget(self.count)
        self.refresh()

    def _filters(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        bar.addWidget(plain_label("Show", self, wrap=False))
        self.filter = QComboBox(self)
        self.filter.setAccessibleName("Show decisions of kind")
        self.filter.addItem(ALL_DECISIONS, ALL)
        for decision in DECISIONS:
            self.filter.addItem(decision, decision)
        self.extension_filter = QComboBox(self)
        self.extension_filter.setAccessibleName("Show decisions of extension")
        self.outcome_filter = QComboBox(self)
        self.outcome_filter.setAccessibleName("Show decisions with outcome")
        for box in (self.filter, self.extension_filter, self.outcome_filter):
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            box.currentIndexChanged.connect(lambda _i: self.refresh())
            bar.addWidget(box)
        bar.addStretch(1)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setAccessibleDescription("Read the audit log again")
        self.refresh_button.clicked.connect(self.refresh)
        bar.addWidget(self.refresh_button)
        return bar

    def _table(self) -> QTableWidget:
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setAccessibleName("Decisions")
        self.table.setTabKeyNavigation(False)  # arrows move between cells; Tab leaves the table
        self.table.setHorizontalHeaderLabels([label for _key, label in COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.currentCellChanged.connect(lambda row, *_: self.show_detail(row))
        return self.table

    def refresh(self) -> None:
        scan = self.log.scan()
        records = list(scan.records)
        self._offer(self.extension_filter, "All extensions", sorted({r.extension for r in records}))
        self._offer(self.outcome_filter, "All outcomes", sorted({r.outcome for r in records}))
        self.shown = rows(
            records,
            str(self.filter.currentData() or ""),
            str(self.extension_filter.currentData() or ""),
            str(self.outcome_filter.currentData() or ""),
        )
        self.table.setRowCount(len(self.shown))
        for r, record in enumerate(self.shown):
            for c, (key, _label) in enumerate(COLUMNS):
                text = local_time_of(record.time) if key == "time" else str(getattr(record, key))
                item = QTableWidgetItem(elide(text, 120))
                if key == "time":
                    item.setToolTip(record.time)
                self.table.setItem(r, c, item)
        problems = scan.problems(self.log.path)
        set_plain(self.count, f"{len(self.shown)} decision(s)" + (f" — {problems}" if problems else ""))
        exported = export_text(self.export()) if self.export is not None else ""
        set_plain(self.export_line, exported)
        self.export_line.setVisible(bool(exported))
        self.show_detail(self.table.currentRow())

    def _offer(self, box: QComboBox, everything: str, values: list[str]) -> None:
        """Keep ``box``'s choices to what the log holds, and its current choice."""
        current = box.currentData()
        box.blockSignals(True)
        box.clear()
        box.addItem(everything, ALL)
        for value in values:
            box.addItem(elide(value, 60), value)
        index = box.findData(current)
        box.setCurrentIndex(max(index, 0))
        box.blockSignals(False)

    def show_detail(self, row: int) -> None:
        while self.detail_form.rowCount():
            self.detail_form.removeRow(0)
        if not 0 <= row < len(self.shown):
            self.detail_form.addRow(
                plain_label("Select a decision to see what the dialog showed.", self.detail)
            )
            return
        for label, text in details(self.shown[row]):
            value = plain_label(text, self.detail, wrap=label == "Fields shown")
            value.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
            value.setAccessibleName(label)
            if label == "Request digest":
                value.setFont(monospace())
            self.detail_form.addRow(visible(label), value)
