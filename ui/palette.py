"""The command palette (Ctrl+K): every action of the window, found by typing a few letters.

``Command`` is one action with its title; ``ranked`` orders the commands that match what was
typed by a fuzzy score (each typed character in order, rewarding runs and word starts), the way
VS Code's and Raycast's palettes do. ``CommandPalette`` is the small window over Helm's: a search
field, the matches, Enter runs the one selected, Escape closes it. The window gives the commands
fresh each time it opens, so they match the workspace shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ui.qt import (
    QDialog,
    QEvent,
    QKeyEvent,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QObject,
    Qt,
    QVBoxLayout,
    QWidget,
)
from ui.text import plain_label, set_plain
from ui.theme import set_tone
from ui.theme_data import SPACE, TYPE_SCALE

MAX_SHOWN = 50


@dataclass(frozen=True)
class Command:
    title: str
    run: Callable[[], object]
    detail: str = ""
    """A word on where it acts ("Settings", a workspace's name); searched too."""

    @property
    def text(self) -> str:
        return f"{self.title} — {self.detail}" if self.detail else self.title


def fuzzy_score(query: str, text: str) -> int | None:
    """How well ``query`` matches ``text`` (higher is better), or None when some typed
    character does not appear in order. Case does not matter; spaces in the query are ignored."""
    wanted = "".join(query.lower().split())
    if not wanted:
        return 0
    hay = text.lower()
    score, at, run = 0, 0, 0
    for ch in wanted:
        found = hay.find(ch, at)
        if found < 0:
            return None
        run = run + 1 if found == at and at > 0 else 1
        starts_word = found == 0 or not hay[found - 1].isalnum()
        score += 10 * run + (15 if starts_word else 0) - min(found - at, 10)
        at = found + 1
    return score - len(hay) // 8  # a shorter title that matches as well ranks first


def ranked(query: str, commands: Sequence[Command]) -> list[Command]:
    """The commands that match ``query``, best first (the given order among equals)."""
    scored = [(s, i, c) for i, c in enumerate(commands) if (s := fuzzy_score(query, c.text)) is not None]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [c for _s, _i, c in scored[:MAX_SHOWN]]


class CommandPalette(QDialog):
    """The palette window; ``commands`` is asked each time it opens."""

    def __init__(self, commands: Callable[[], list[Command]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self.setAccessibleName("Command palette")
        self.setModal(True)
        self.commands_of = commands
        self.commands: list[Command] = []
        self.shown: list[Command] = []
        col = QVBoxLayout(self)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Type a command: add workspace, connect, install, stop, activity…")
        self.search.setAccessibleName("Search commands")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.filter)
        self.search.installEventFilter(self)
        col.addWidget(self.search)
        self.list = QListWidget(self)
        self.list.setAccessibleName("Commands")
        self.list.itemActivated.connect(lambda _item: self.run_selected())
        col.addWidget(self.list, 1)
        self.nothing = plain_label("", self)
        set_tone(self.nothing, "muted")
        self.nothing.hide()
        col.addWidget(self.nothing)
        self._look(col)
        self.resize(600, 400)

    def _look(self, col: QVBoxLayout) -> None:
        """Raycast's shape on Helm's scales: a large search field, roomy frameless rows."""
        s1, s2, s3, _s4 = SPACE
        font = self.search.font()
        font.setPointSizeF(font.pointSizeF() * TYPE_SCALE["lg"])
        self.search.setFont(font)
        col.setContentsMargins(s2, s2, s2, s2)
        col.setSpacing(s2)
        self.setStyleSheet(
            f"QLineEdit {{ padding: {s2}px {s3}px; }}"
            f" QListWidget {{ border: none; }} QListWidget::item {{ padding: {s1 + 2}px {s2}px; }}"
        )

    def open_fresh(self) -> None:
        """Show the palette with every command of now, the search empty and focused."""
        self.commands = self.commands_of()
        self.search.clear()
        self.filter("")
        parent = self.parentWidget()
        if parent is not None:
            top = parent.mapToGlobal(parent.rect().topLeft())
            self.move(top.x() + (parent.width() - self.width()) // 2, top.y() + parent.height() // 8)
        self.show()
        self.raise_()
        self.activateWindow()
        self.search.setFocus()

    def filter(self, query: str) -> None:
        self.shown = ranked(query, self.commands)
        self.list.clear()
        for command in self.shown:
            item = QListWidgetItem(command.text, self.list)
            item.setToolTip(command.text)
        if self.shown:
            self.list.setCurrentRow(0)
        set_plain(self.nothing, f"No command matches “{query.strip()}”. Try fewer letters.")
        self.nothing.setVisible(not self.shown and bool(query.strip()))

    def run_selected(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self.shown):
            command = self.shown[row]
            self.accept()
            command.run()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up, Down and Enter in the search field move in and run from the list."""
        if watched is self.search and isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.list.count():
                step = 1 if key == Qt.Key.Key_Down else -1
                self.list.setCurrentRow(max(0, min(self.list.count() - 1, self.list.currentRow() + step)))
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.run_selected()
                return True
        return super().eventFilter(watched, event)
