"""The Agents page's past sessions (``<home>/agent-sessions.json``), newest first, to resume one."""

from __future__ import annotations

from pathlib import Path

from broker.agents import PastSession, past_sessions
from broker.errors import HelmError
from ui.qt import (
    QAbstractItemView,
    QHBoxLayout,
    QPushButton,
    Qt,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import elide
from ui.when import full_local_time_of, local_time_of

COLUMNS = ("Started", "Agent", "Where", "First prompt")
ROLE = Qt.ItemDataRole.UserRole


class PastSessions(QWidget):
    resume = Signal(object)
    """The user asked to continue a past session (its ``PastSession``)."""

    def __init__(self, home: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.home = home
        self.sessions: list[PastSession] = []
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        self.list = QTreeWidget(self)
        self.list.setAccessibleName("Past sessions")
        self.list.setHeaderLabels(list(COLUMNS))
        self.list.setRootIsDecorated(False)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.itemDoubleClicked.connect(lambda *_: self.resume_selected())
        self.list.currentItemChanged.connect(lambda *_: self.update_button())
        col.addWidget(self.list, 1)
        row = QHBoxLayout()
        self.resume_button = QPushButton("Resume", self)
        self.resume_button.setToolTip("Continue the selected session with your next prompt")
        self.resume_button.clicked.connect(self.resume_selected)
        row.addStretch(1)
        row.addWidget(self.resume_button)
        col.addLayout(row)
        self.update_button()

    def reload(self) -> str:
        """Read the list again; a problem, or ""."""
        try:
            self.sessions = past_sessions(self.home)
        except HelmError as err:
            return str(err)
        current = self.selected()
        self.list.clear()
        for past in self.sessions:
            where = past.workspace + (f" ({', '.join(past.projects)})" if past.projects else "")
            when = local_time_of(past.started_at)
            item = QTreeWidgetItem([when, elide(past.agent, 40), elide(where, 60), elide(past.title, 80)])
            item.setData(0, ROLE, past.id)
            item.setToolTip(0, full_local_time_of(past.started_at))
            item.setToolTip(3, elide(f"{past.title} (session {past.id})", 300))
            self.list.addTopLevelItem(item)
            if current is not None and past.id == current.id:
                self.list.setCurrentItem(item)
        for column in range(len(COLUMNS) - 1):
            self.list.resizeColumnToContents(column)
        self.update_button()
        return ""

    def selected(self) -> PastSession | None:
        item = self.list.currentItem()
        if item is None:
            return None
        session_id = item.data(0, ROLE)
        return next((s for s in self.sessions if s.id == session_id), None)

    def update_button(self) -> None:
        self.resume_button.setEnabled(self.isEnabled() and self.selected() is not None)

    def resume_selected(self) -> None:
        past = self.selected()
        if past is not None and self.isEnabled():
            self.resume.emit(past)
