"""The Agents page's past sessions (``<home>/agent-sessions.json``), newest first, to resume one.

Each row is two lines: the first line of the session's first prompt, then when it started,
the agent and where it worked.
"""

from __future__ import annotations

from pathlib import Path

from broker.agents import PastSession, past_sessions
from broker.errors import HelmError
from ui.qt import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from ui.text import elide, plain_tip
from ui.when import full_local_time_of, local_time_of

ROLE = Qt.ItemDataRole.UserRole


def row_text(past: PastSession) -> str:
    where = past.workspace + (f" ({', '.join(past.projects)})" if past.projects else "")
    first = elide(past.title, 80) or "(no prompt)"
    return f"{first}\n{local_time_of(past.started_at)} · {elide(past.agent, 40)} · {elide(where, 60)}"


class PastSessions(QWidget):
    resume = Signal(object)
    """The user asked to continue a past session (its ``PastSession``)."""

    def __init__(self, home: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.home = home
        self.sessions: list[PastSession] = []
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        col.addWidget(QLabel("Past sessions", self))
        self.list = QListWidget(self)
        self.list.setAccessibleName("Past sessions")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setAlternatingRowColors(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
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
            item = QListWidgetItem(row_text(past), self.list)
            item.setData(ROLE, past.id)
            tip = f"{past.title}\nStarted {full_local_time_of(past.started_at)}\nSession {past.id}"
            item.setToolTip(plain_tip(tip))
            if current is not None and past.id == current.id:
                self.list.setCurrentItem(item)
        self.update_button()
        return ""

    def selected(self) -> PastSession | None:
        item = self.list.currentItem()
        if item is None:
            return None
        session_id = item.data(ROLE)
        return next((s for s in self.sessions if s.id == session_id), None)

    def update_button(self) -> None:
        self.resume_button.setEnabled(self.isEnabled() and self.selected() is not None)

    def resume_selected(self) -> None:
        past = self.selected()
        if past is not None and self.isEnabled():
            self.resume.emit(past)
