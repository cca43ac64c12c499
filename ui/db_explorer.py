"""The DB explorer window: choose a database profile, run SQL, read the rows in a table.

The logic is the broker's (``broker.kinds.db.explorer.DbExplorer``): Run is always read-only;
"Run as write" exists only while the write toggle for that database is on, and the toggle and
every write statement are confirmed in Helm's dialog. Cell values come from the database, so
they are shown as plain text (table items never interpret markup).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, Protocol

from broker.summary import Confirmer, Decision
from ui.aio import OwnedTasks
from ui.dialogs.confirm import DialogConfirmer
from ui.qt import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)
from ui.text import elide, monospace, plain_label, set_plain
from ui.theme import set_tone

MAX_CELL_CHARS = 500


class ProfileChoice(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def engine(self) -> str: ...

    @property
    def where(self) -> str: ...


class ExplorerBackend(Protocol):
    """What the window needs; ``broker.kinds.db.explorer.DbExplorer`` is one."""

    def profiles(self) -> Sequence[ProfileChoice]: ...

    def writes_enabled(self, profile: str) -> bool: ...

    def disable_writes(self, profile: str) -> None: ...

    async def enable_writes(self, profile: str, confirm: Confirmer) -> Decision: ...

    async def query(self, profile: str, sql: str) -> dict[str, Any]: ...

    async def request_write(self, profile: str, sql: str, confirm: Confirmer) -> dict[str, Any]: ...


class DbExplorerWindow(QWidget):
    def __init__(
        self,
        backend: ExplorerBackend,
        parent: QWidget | None = None,
        *,
        confirm: Confirmer | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("DB explorer")
        self.resize(900, 600)
        self.backend = backend
        self.confirm = confirm or DialogConfirmer(self)
        self.tasks = OwnedTasks(self)
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        self.profile_box = QComboBox(self)
        self.profile_box.setAccessibleName("Database")
        self.profile_box.currentIndexChanged.connect(lambda _i: self.sync_toggle())
        top.addWidget(plain_label("Database", self, wrap=False))
        top.addWidget(self.profile_box, 1)
        self.write_toggle = QCheckBox("Allow writes", self)
        self.write_toggle.clicked.connect(self.toggle_clicked)
        top.addWidget(self.write_toggle)
        layout.addLayout(top)
        self.sql = QPlainTextEdit(self)
        self.sql.setAccessibleName("SQL")
        self.sql.setTabChangesFocus(True)  # Tab moves on: the keyboard is never trapped here
        self.sql.setFont(monospace())
        self.sql.setPlaceholderText("SELECT * FROM …")
        self.sql.setMaximumHeight(140)
        layout.addWidget(self.sql)
        row = QHBoxLayout()
        self.run_button = QPushButton("Run", self)
        self.run_button.clicked.connect(self.start_run)
        row.addWidget(self.run_button)
        self.write_button = QPushButton("Run as write…", self)
        self.write_button.clicked.connect(self.start_write)
        row.addWidget(self.write_button)
        self.mode = plain_label("", self, wrap=False)
        row.addWidget(self.mode, 1)
        layout.addLayout(row)
        self.status = plain_label("", self)
        layout.addWidget(self.status)
        self.table = QTableWidget(self)
        self.table.setAccessibleName("Result")
        self.table.setTabKeyNavigation(False)  # arrows move between cells; Tab leaves the table
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        layout.addWidget(self.table, 1)
        self.reload_profiles()

    @property
    def current(self) -> str | None:
        data = self.profile_box.currentData()
        return str(data) if data else None

    def reload_profiles(self) -> None:
        self.profile_box.clear()
        for choice in self.backend.profiles():
            self.profile_box.addItem(
                elide(f"{choice.name} — {choice.engine} — {choice.where}", 120), choice.name
            )
        self.sync_toggle()

    def sync_toggle(self) -> None:
        name = self.current
        on = name is not None and self.backend.writes_enabled(name)
        self.write_toggle.setChecked(on)
        self.write_toggle.setEnabled(name is not None)
        self.run_button.setEnabled(name is not None)
        self.write_button.setVisible(on)
        self.mode.setText("Writes on — each statement asks for your confirmation" if on else "Read-only")

    def toggle_clicked(self, checked: bool) -> asyncio.Task[Any] | None:
        name = self.current
        if name is None:
            return None
        if not checked:
            self.backend.disable_writes(name)
            self.sync_toggle()
            return None
        self.write_toggle.setChecked(False)  # on only after the user confirms
        return self.tasks.start(self.ask_toggle(name))

    async def ask_toggle(self, name: str) -> bool:
        decision = await self.backend.enable_writes(name, self.confirm)
        self.sync_toggle()
        return decision is Decision.CONFIRMED

    def start_run(self) -> asyncio.Task[Any] | None:
        return self._start(write=False)

    def start_write(self) -> asyncio.Task[Any] | None:
        return self._start(write=True)

    def _start(self, *, write: bool) -> asyncio.Task[Any] | None:
        name = self.current
        sql = self.sql.toPlainText().strip()
        if name is None or not sql:
            return None
        return self.tasks.start(self.run(name, sql, write=write))

    async def run(self, name: str, sql: str, *, write: bool = False) -> dict[str, Any]:
        self.run_button.setEnabled(False)
        self.write_button.setEnabled(False)
        set_plain(self.status, "Waiting for your confirmation…" if write else "Running…")
        set_tone(self.status, None)
        try:
            if write:
                envelope = await self.backend.request_write(name, sql, self.confirm)
            else:
                envelope = await self.backend.query(name, sql)
        finally:
            self.run_button.setEnabled(True)
            self.write_button.setEnabled(True)
            self.sync_toggle()
        self.show_result(envelope)
        return envelope

    def show_result(self, envelope: dict[str, Any]) -> None:
        if not envelope.get("ok"):
            error = envelope.get("error") or {}
            set_plain(self.status, f"{error.get('code', 'error')}: {error.get('message', '')}")
            set_tone(self.status, "error")
            return
        set_tone(self.status, None)
        data = envelope.get("data") or {}
        if "rowsAffected" in data:
            set_plain(self.status, f"{data['rowsAffected']} row(s) changed.")
            self.table.clear()
            self.table.setRowCount(0)
            self.table.setColumnCount(0)
            return
        columns = [str(c) for c in data.get("columns", [])]
        rows = data.get("rows", [])
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels([elide(c, 60) for c in columns])
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(cell_text(value)))
        self.table.resizeColumnsToContents()
        set_plain(self.status, f"{len(rows)} row(s).")


def cell_text(value: Any) -> str:
    if value is None:
        return "NULL"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return elide(text, MAX_CELL_CHARS)
