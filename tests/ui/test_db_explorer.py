"""The DB explorer on a real SQLite file: read-only by default, the write toggle flow."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from broker import Broker
from broker.kinds.db import profiles as db_profiles
from broker.summary import Decision
from tests.helpers import ScriptedConfirmer, new_broker
from ui.db_explorer import DbExplorer
from ui.db_explorer_model import BrokerExplorer
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
    db_profiles.save(
        b.home, b.credentials, db_profiles.DbProfile("local", "sqlite", path=str(database)), None
    )
    yield b
    run(b.aclose())


def explorer(qtbot: QtBot, broker: Broker, confirmer: ScriptedConfirmer | None = None) -> DbExplorer:
    window = DbExplorer(BrokerExplorer(broker), confirm=confirmer, guard_ms=0)
    qtbot.addWidget(window)
    window.show()
    return window


def run_sql(window: DbExplorer, sql: str, run: Any) -> dict[str, Any]:
    window.sql.setPlainText(sql)
    task = window.start_run()
    assert task is not None

    async def done() -> dict[str, Any]:
        return await task

    result: dict[str, Any] = run(done(), 20)
    return result


def count(database: Path) -> int:
    with sqlite3.connect(database) as db:
        return int(db.execute("SELECT count(*) FROM tickets").fetchone()[0])


def test_a_query_shows_its_rows_in_a_table_as_plain_text(qtbot: QtBot, broker: Broker, run: Any) -> None:
    window = explorer(qtbot, broker)
    assert window.current == "local"
    result = run_sql(window, "SELECT id, title FROM tickets ORDER BY id", run)
    assert result["ok"]
    assert window.table.columnCount() == 2
    assert window.table.horizontalHeaderItem(1).text() == "title"
    assert window.table.item(1, 1).text() == "<b>x</b><img src=x>"
    assert window.status.text() == "2 row(s)."


def test_without_the_toggle_a_write_is_refused_by_the_database(
    qtbot: QtBot, broker: Broker, run: Any, database: Path
) -> None:
    window = explorer(qtbot, broker)
    result = run_sql(window, "DELETE FROM tickets", run)
    assert not result["ok"]
    assert count(database) == 2
    assert window.status.text().startswith(result["error"]["code"])


def turn_on_writes(qtbot: QtBot, window: DbExplorer, button: str, run: Any) -> bool:
    task = window.toggle_clicked(True)
    assert task is not None
    qtbot.waitUntil(
        lambda: window.toggle_dialog is not None and window.toggle_dialog.isVisible(), timeout=3000
    )
    assert window.toggle_dialog is not None
    assert window.toggle_dialog.focusWidget() is window.toggle_dialog.cancel_button
    qtbot.mouseClick(getattr(window.toggle_dialog, button), Qt.MouseButton.LeftButton)

    async def done() -> bool:
        return bool(await task)

    return bool(run(done(), 5))


def test_turning_writes_on_needs_a_confirmation(qtbot: QtBot, broker: Broker, run: Any) -> None:
    window = explorer(qtbot, broker)
    assert not turn_on_writes(qtbot, window, "cancel_button", run)
    assert not window.write_toggle.isChecked()
    assert turn_on_writes(qtbot, window, "accept_button", run)
    assert window.write_toggle.isChecked()
    assert "confirmation" in window.mode.text()


def test_with_writes_on_each_statement_is_confirmed_and_bound_to_the_exact_sql(
    qtbot: QtBot, broker: Broker, run: Any, database: Path
) -> None:
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    window = explorer(qtbot, broker, confirmer)
    turn_on_writes(qtbot, window, "accept_button", run)
    result = run_sql(window, "DELETE FROM tickets WHERE id = 1", run)
    assert result == {"ok": True, "data": {"rowsAffected": 1}, "error": None}
    assert count(database) == 1
    shown = confirmer.shown[-1]
    assert shown.title == "Confirm database write"
    assert shown.request == "DELETE FROM tickets WHERE id = 1"
    # The token is one-time and bound to that SQL: it cannot run anything else.
    other = run(BrokerExplorer(broker).write("local", "DELETE FROM tickets", shown.token))
    assert other["error"]["code"] == "confirmation_required"
    assert count(database) == 1


def test_a_declined_write_changes_nothing(qtbot: QtBot, broker: Broker, run: Any, database: Path) -> None:
    window = explorer(qtbot, broker, ScriptedConfirmer(Decision.DECLINED))
    turn_on_writes(qtbot, window, "accept_button", run)
    result = run_sql(window, "DELETE FROM tickets", run)
    assert result["error"]["code"] == "declined"
    assert count(database) == 2


def test_changing_the_profile_turns_writes_off(
    qtbot: QtBot, broker: Broker, run: Any, tmp_path: Path, database: Path
) -> None:
    window = explorer(qtbot, broker)
    turn_on_writes(qtbot, window, "accept_button", run)
    copy = tmp_path / "copy.db"
    copy.write_bytes(database.read_bytes())
    db_profiles.save(
        broker.home, broker.credentials, db_profiles.DbProfile("local", "sqlite", path=str(copy)), None
    )
    window.sync_toggle()
    assert not window.write_toggle.isChecked()
    assert window.mode.text() == "Read-only"
