"""The one write pipeline: prepared once, sent only as confirmed, the explorer on the same path.

Real SQLite files and a real home; the user's answers are scripted, and a confirmer that edits
Helm's settings while it "decides" stands for a user editing a profile under an open dialog.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, Decision, WriteSummary
from broker.context import HelmItself
from broker.kinds import KINDS
from broker.kinds.db.explorer import DbExplorer
from broker.kinds.db.profiles import DbProfile
from broker.workspaces import add_project
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.kinds.db_setup import add_profile, db_world

CLOSE = {"sql": "UPDATE t SET v = 'closed' WHERE id = ?", "params": ["id"], "write": True}


def make_db(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'open');"
        )
    conn.close()
    return path


def value(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT v FROM t WHERE id = 1").fetchone()[0])
    finally:
        conn.close()


def closing_world(tmp: Path, db: Path) -> Any:
    """An extension whose write query ``close`` updates row 1 of the SQLite file ``db``."""
    profile = DbProfile(name="main", engine="sqlite", path=str(db))
    return db_world(tmp, "sqlite", {"close": CLOSE}, write=True, profile=profile)


class EditsThenConfirms(ScriptedConfirmer):
    """Changes Helm's settings while the dialog is open, then clicks Confirm."""

    def __init__(self, edit: Any) -> None:
        super().__init__(Decision.CONFIRMED)
        self.edit = edit

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.edit()
        return await super().__call__(summary)


async def counting_describe(broker: Broker, kind: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    adapter = await broker.kind(KINDS[kind])
    calls: list[str] = []
    real = adapter.describe

    async def describe(call: Any) -> Any:
        calls.append(call.operation)
        return await real(call)

    monkeypatch.setattr(adapter, "describe", describe)
    return calls


async def test_a_confirmed_write_describes_its_request_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = make_db(tmp_path / "a.db")
    async with closing_world(tmp_path, db) as world:
        described = await counting_describe(world.broker, "db", monkeypatch)
        result = await world.broker.request(world.ctx, "app", "close", {"id": 1}, ScriptedConfirmer())
    assert result["ok"]
    assert described == ["close"]
    assert value(db) == "closed"


async def test_a_profile_changed_while_the_dialog_is_open_sends_nothing(tmp_path: Path) -> None:
    first, second = make_db(tmp_path / "a.db"), make_db(tmp_path / "b.db")
    async with closing_world(tmp_path, first) as world:
        moved = DbProfile(name="main", engine="sqlite", path=str(second))
        confirm = EditsThenConfirms(lambda: add_profile(world.broker, moved))
        result = await world.broker.request(world.ctx, "app", "close", {"id": 1}, confirm)
        records = [(r.decision, r.outcome) for r in world.broker.audit.records()]
    assert result["error"]["code"] == "confirmation_required"
    assert (value(first), value(second)) == ("open", "open")
    assert records == [("refused", "nothing sent")]


async def test_settings_changed_elsewhere_while_the_dialog_is_open_still_send_the_write(
    tmp_path: Path,
) -> None:
    db = make_db(tmp_path / "a.db")
    async with closing_world(tmp_path, db) as world:
        confirm = EditsThenConfirms(lambda: add_project(world.broker.home, "ws", "web", tmp_path))
        result = await world.broker.request(world.ctx, "app", "close", {"id": 1}, confirm)
    assert result["ok"]
    assert value(db) == "closed"


@pytest.fixture
async def explorer(tmp_path: Path) -> Any:
    async with new_broker(tmp_path / "home") as broker:
        add_profile(broker, DbProfile(name="local", engine="sqlite", path=str(make_db(tmp_path / "a.db"))))
        explorer = DbExplorer(broker)
        assert await explorer.enable_writes("local", ScriptedConfirmer()) is Decision.CONFIRMED
        yield explorer


async def test_turning_explorer_writes_off_under_an_open_dialog_sends_nothing(
    explorer: DbExplorer, tmp_path: Path
) -> None:
    confirm = EditsThenConfirms(lambda: explorer.disable_writes("local"))
    result = await explorer.request_write("local", "UPDATE t SET v = 'x'", confirm)
    assert result["error"]["code"] == "refused"
    assert value(tmp_path / "a.db") == "open"


async def test_explorer_writes_are_audited_by_the_broker_pipeline_as_helm_itself(
    explorer: DbExplorer, tmp_path: Path
) -> None:
    confirm = ScriptedConfirmer()
    done = await explorer.request_write("local", "UPDATE t SET v = 'x'", confirm)
    await explorer.request_write("local", "DELETE FROM t", ScriptedConfirmer(Decision.DECLINED))
    records = [
        (r.requester, r.extension, r.operation, r.decision, r.outcome)
        for r in explorer._broker.audit.records()
    ]
    assert done == {"ok": True, "data": {"rowsAffected": 1}, "error": None}
    assert records == [
        ("helm", "helm.db-explorer", "enable writes", "confirmed", "sending"),
        ("helm", "helm.db-explorer", "enable writes", "confirmed", "ok"),
        ("helm", "helm.db-explorer", "write", "confirmed", "sending"),
        ("helm", "helm.db-explorer", "write", "confirmed", "ok"),
        ("helm", "helm.db-explorer", "write", "declined", "nothing sent"),
    ]
    (shown,) = confirm.shown
    assert shown.requester == HelmItself("helm.db-explorer", "DB explorer")
    assert "Helm's DB explorer (helm.db-explorer)" in shown.as_text()
