"""The DB explorer window on a real SQLite file: read-only Run, the confirmed write toggle."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.kinds.db import profiles as db_profiles
from broker.kinds.db.explorer import DbExplorer as ExplorerLogic
from broker.summary import Decision
from tests.helpers import ScriptedConfirmer, new_broker
from ui.db_explorer import DbExplorerWindow
from ui.dialogs.confirm import DialogConfirmer
from ui.qt import Qt


@pytest.fixture
def database(tmp_path: Path) -> Path:
    file = tmp_path / "app.db"
    with sqlite3.connect(file) as db:
        db.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT)")
        db.executemany("INSERT INTO tickets (title) VALUES (?)", [("first",), ("<b>x</b><img src=x>",)])
    return file


@pytest.fixture
def broker(tmp_path: Path, database: Path, run: Any) -> Iterator[Broker]:
    b = new_broker(tmp_path / "home")
    b.home.ensure()
    db_profiles.DATABASES.store(b.home, b.credentials).save(
        db_profiles.DbProfile("local", "sqlite", path=str(database))
    )
    yield b
    run(b.aclose())


def explorer(qtbot: QtBot, broker: Broker, confirm: Any = None) -> DbExplorerWindow:
    window = DbExplorerWindow(ExplorerLogic(broker), confirm=confirm)
    qtbot.addWidget(window)
    window.show()
    return window


async def outcome(task: Any) -> Any:
    return await task


def run_sql(window: DbExplorerWindow, sql: str, run: Any, *, write: bool = False) -> dict[str, Any]:
    window.sql.setPlainText(sql)
    task = window.start_write() if write else window.start_run()
    assert task is not None
    result: dict[str, Any] = run(outcome(task), 20)
    return result


def count(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return int(db.execute("SELECT count(*) FROM tickets").fetchone()[0])


def test_a_query_shows_its_rows_in_a_table_as_plain_text(qtbot: QtBot, broker: Broker, run: Any) -> None:
    window = explorer(qtbot, broker)
    assert window.current == "local"
    assert not window.write_button.isVisible()
    result = run_sql(window, "SELECT id, title FROM tickets ORDER BY id", run)
    assert result["ok"]
    assert window.table.columnCount() == 2
    assert window.table.horizontalHeaderItem(1).text() == "title"
    assert window.table.item(1, 1).text() == "<b>x</b><img src=x>"
    assert window.status.text() == "2 row(s)."


def test_run_is_read_only_so_the_database_refuses_a_write(
    qtbot: QtBot, broker: Broker, run: Any, database: Path
) -> None:
    window = explorer(qtbot, broker)
    result = run_sql(window, "DELETE FROM tickets", run)
    assert not result["ok"]
    assert count(database) == 2
    assert window.status.text().startswith(result["error"]["code"])


def test_turning_writes_on_asks_in_helms_dialog_with_cancel_first(
    qtbot: QtBot, broker: Broker, run: Any
) -> None:
    confirmer = DialogConfirmer()
    window = explorer(qtbot, broker, confirmer)
    for button, expected in (("cancel_button", False), ("accept_button", True)):
        task = window.toggle_clicked(True)
        assert task is not None
        qtbot.waitUntil(lambda: bool(confirmer.open_dialogs), timeout=3000)
        dialog = confirmer.open_dialogs[0]
        qtbot.waitExposed(dialog)
        assert dialog.windowTitle() == "Allow database writes"
        assert dialog.focusWidget() is dialog.cancel_button
        dialog.guard.release()
        qtbot.mouseClick(getattr(dialog, button), Qt.MouseButton.LeftButton)
        assert run(outcome(task), 5) is expected
        qtbot.waitUntil(lambda: not confirmer.open_dialogs, timeout=3000)
        assert window.write_toggle.isChecked() is expected
    assert window.write_button.isVisible()
    assert "confirmation" in window.mode.text()


def test_with_writes_on_each_statement_is_confirmed(
    qtbot: QtBot, broker: Broker, run: Any, database: Path
) -> None:
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    window = explorer(qtbot, broker, confirmer)
    assert run(outcome(window.toggle_clicked(True)), 5) is True
    result = run_sql(window, "DELETE FROM tickets WHERE id = 1", run, write=True)
    assert result["ok"], result
    assert result["data"] == {"rowsAffected": 1}
    assert count(database) == 1
    assert window.status.text() == "1 row(s) changed."
    assert confirmer.shown[-1].title == "Confirm database write"
    assert confirmer.shown[-1].request == "DELETE FROM tickets WHERE id = 1"


def test_a_declined_write_changes_nothing(qtbot: QtBot, broker: Broker, run: Any, database: Path) -> None:
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    window = explorer(qtbot, broker, confirmer)
    run(outcome(window.toggle_clicked(True)), 5)
    confirmer.decision = Decision.DECLINED
    result = run_sql(window, "DELETE FROM tickets", run, write=True)
    assert result["error"]["code"] == "declined"
    assert count(database) == 2


def test_changing_the_profile_turns_writes_off(
    qtbot: QtBot, broker: Broker, run: Any, tmp_path: Path, database: Path
) -> None:
    window = explorer(qtbot, broker, ScriptedConfirmer(Decision.CONFIRMED))
    run(outcome(window.toggle_clicked(True)), 5)
    assert window.write_toggle.isChecked()
    copy = tmp_path / "copy.db"
    copy.write_bytes(database.read_bytes())
    db_profiles.DATABASES.store(broker.home, broker.credentials).save(
        db_profiles.DbProfile("local", "sqlite", path=str(copy))
    )
    window.sync_toggle()
    assert not window.write_toggle.isChecked()
    assert window.mode.text() == "Read-only"
