"""The manifest panel of ``helm dev``: every problem with its JSON path, or that all is well."""

from __future__ import annotations

from collections.abc import Sequence

from broker.kinds.base import Issue
from ui.qt import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget, Signal
from ui.text import set_plain, visible


class LintPanel(QWidget):
    """Shows the result of the last lint; ``linted`` carries the issues (empty when clean)."""

    linted = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.issues: tuple[Issue, ...] = ()
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["JSON path", "Problem"])
        self.tree.setRootIsDecorated(False)
        self.tree.setColumnWidth(0, 260)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)

    def show_issues(self, issues: Sequence[Issue], manifest_file: str) -> None:
        self.issues = tuple(issues)
        self.tree.clear()
        for issue in issues:
            # QTreeWidgetItem text is plain: a message quoting the manifest stays text.
            self.tree.addTopLevelItem(QTreeWidgetItem([visible(issue.path), visible(issue.message)]))
        if issues:
            set_plain(
                self.summary,
                f"{len(issues)} problem(s) in {manifest_file}. The page loads again when they are fixed.",
            )
            self.summary.setStyleSheet("color: #8a1111; font-weight: bold;")
        else:
            set_plain(self.summary, f"{manifest_file}: no problems.")
            self.summary.setStyleSheet("color: #0a5d1a;")
        self.linted.emit(self.issues)

    def rows(self) -> list[tuple[str, str]]:
        return [
            (item.text(0), item.text(1))
            for item in (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
            if item is not None
        ]
