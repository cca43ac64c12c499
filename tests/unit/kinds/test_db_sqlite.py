"""The db kind on real SQLite files, through the real broker."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from broker import Decision
from broker.kinds.db import sqlite as sqlite_engine
from broker.kinds.db.profiles import DbProfile
from tests.helpers import ScriptedConfirmer
from tests.unit.kinds.db_setup import db_world


def make_db(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER, price REAL,
                                blob BLOB);
            INSERT INTO items (name, qty, price, blob) VALUES
              ('anchor', 3, 9.5, x'00ff'), ('compass', 1, NULL, NULL), ('sextant', 0, 1.25, NULL);
            """
        )
    conn.close()
    return path


def digest_folder(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()
    }


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return make_db(folder / "app.db")


def profile(path: Path) -> DbProfile:
    return DbProfile(name="main", engine="sqlite", path=str(path))


QUERIES: dict[str, Any] = {
    "items": {"sql": "SELECT id, name, qty, price, blob FROM items WHERE qty >= ? ORDER BY id",
              "params": ["min"]},
    "count": {"sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < ?) "
                     "SELECT n FROM r", "params": ["n"]},
    "wide": {"sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 600) "
                    "SELECT n, printf('%.4000c', 'x') FROM r"},
    "big": {"sql": "SELECT 9007199254740993, 42, -7"},
    "forever": {"sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                       "SELECT count(*) FROM r"},
    "missing": {"sql": "SELECT * FROM no_such_table"},
    "echo": {"sql": "SELECT ?, ?", "params": ["a", "b"]},
}  # fmt: skip


async def test_read_returns_columns_and_rows_with_contract_types(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        result = await w.call("items", {"min": 1})
    assert result["ok"] is True, result
    assert result["data"]["columns"] == ["id", "name", "qty", "price", "blob"]
    assert result["data"]["rows"] == [
        [1, "anchor", 3, 9.5, base64.b64encode(b"\x00\xff").decode()],
        [2, "compass", 1, None, None],
    ]


async def test_integers_beyond_a_javascript_number_are_strings(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        result = await w.call("big")
    assert result["data"]["rows"] == [["9007199254740993", 42, -7]]


async def test_recursive_ctes_keep_working_and_args_bind_in_order(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        counted = await w.call("count", {"n": 3})
        echoed = await w.call("echo", {"b": None, "a": "first", "unused": "ignored"})
    assert counted["data"]["rows"] == [[1], [2], [3]]
    assert echoed["data"]["rows"] == [["first", None]]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param({}, "missing argument 'min'", id="missing"),
        pytest.param({"min": [1]}, "must be a string", id="list"),
        pytest.param({"min": "x" * 4097}, "longer than 4096", id="too-long"),
        pytest.param({"min": 2**64}, "64-bit", id="huge-int"),
    ],
)
async def test_wrong_arguments_are_refused_before_any_io(
    tmp_path: Path, args: dict[str, Any], fragment: str
) -> None:
    # The profile points at a file that does not exist: refusal must come before opening it.
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(tmp_path / "absent.db")) as w:
        result = await w.call("items", args)
    assert result["error"]["code"] == "refused"
    assert fragment in result["error"]["message"]


async def test_a_missing_profile_is_not_configured(tmp_path: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES) as w:
        result = await w.call("items", {"min": 0})
    assert result["error"]["code"] == "not_configured"


async def test_an_engine_other_than_the_profiles_is_refused(tmp_path: Path, db_file: Path) -> None:
    queries = {"q": {"sql": "SELECT 1"}}
    async with db_world(tmp_path, "mysql", queries, profile=profile(db_file)) as w:
        result = await w.call("q")
    assert result["error"]["code"] == "refused"
    assert "engine" in result["error"]["message"]


async def test_a_missing_file_is_unavailable_and_the_next_call_after_it_appears_works(
    tmp_path: Path,
) -> None:
    path = tmp_path / "later.db"
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(path)) as w:
        first = await w.call("items", {"min": 0})
        make_db(path)
        second = await w.call("items", {"min": 0})
    assert first["error"]["code"] == "unavailable"
    assert str(path) not in first["error"]["message"]
    assert second["ok"] is True


async def test_query_failed_carries_the_databases_message_without_the_path(
    tmp_path: Path, db_file: Path
) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        result = await w.call("missing")
    assert result["error"]["code"] == "query_failed"
    assert "no such table" in result["error"]["message"]
    assert str(db_file.parent) not in result["error"]["message"]
    assert "app.db" not in result["error"]["message"]


async def test_1000_rows_pass_and_1001_are_too_many_rows(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        full = await w.call("count", {"n": 1000})
        over = await w.call("count", {"n": 5000})
    assert len(full["data"]["rows"]) == 1000
    assert over["error"]["code"] == "too_many_rows"
    assert over["data"] is None


async def test_more_than_1_mib_of_row_data_is_too_large(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        result = await w.call("wide")
    assert result["error"]["code"] == "too_large"


async def test_a_long_query_is_interrupted_with_timeout(
    tmp_path: Path, db_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_engine, "QUERY_SECONDS", 0.3)
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        result = await w.call("forever")
        after = await w.call("items", {"min": 3})
    assert result["error"]["code"] == "timeout"
    assert after["ok"] is True


async def test_each_connection_thread_ends_when_the_broker_closes(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", QUERIES, profile=profile(db_file)) as w:
        reads = await asyncio.gather(*(w.call("items", {"min": 0}) for _ in range(3)))  # 3 pooled
        running = [t for t in threading.enumerate() if t.name == "helm-sqlite"]
    assert all(r["ok"] for r in reads)
    assert len(running) == 3
    for thread in running:
        thread.join(timeout=5)
    assert not any(t.is_alive() for t in running)


BYPASSES = {
    "attach": "ATTACH DATABASE '{dir}/other.db' AS other",
    "attach_lower_comment": "attach/**/'{dir}/other2.db' as o",
    "attach_expression": "ATTACH ('{dir}' || '/other3.db') AS o",
    "vacuum_into": "VACUUM INTO '{dir}/copy.db'",
    "vacuum": "VACUUM",
    "pragma_user_version": "PRAGMA user_version = 7",
    "pragma_journal_mode": "PRAGMA journal_mode = DELETE",
    "pragma_query_only_off": "PRAGMA query_only = 0",
    "pragma_database_list": "SELECT * FROM pragma_database_list",
    "pragma_database_list_stmt": "PRAGMA database_list",
    "temp_table": "CREATE TEMP TABLE t (a)",
    "temp_table_as": "CREATE TEMPORARY TABLE t AS SELECT * FROM items",
    "temp_view": "CREATE TEMP VIEW v AS SELECT 1",
    "temp_trigger": "CREATE TEMP TRIGGER tr AFTER INSERT ON items BEGIN SELECT 1; END",
    "insert": "INSERT INTO items (name) VALUES ('x')",
    "load_extension": "SELECT load_extension('{dir}/evil')",
    "begin": "BEGIN IMMEDIATE",
    "savepoint": "SAVEPOINT s",
}


@pytest.mark.parametrize("name", sorted(BYPASSES))
async def test_each_read_only_bypass_is_refused_and_changes_nothing(
    tmp_path: Path, db_file: Path, name: str
) -> None:
    folder = db_file.parent
    before = digest_folder(folder)
    queries = {
        "bypass": {"sql": BYPASSES[name].format(dir=folder)},
        "check": {"sql": "SELECT count(*) FROM items"},
    }
    async with db_world(tmp_path, "sqlite", queries, profile=profile(db_file)) as w:
        result = await w.call("bypass")
        # The same pooled connection answers next: nothing the bypass tried may remain.
        temp = await w.broker.database().run(
            profile(db_file), "SELECT count(*) FROM sqlite_temp_master", [], write=False
        )
        check = await w.call("check")
    assert result["ok"] is False, result
    assert result["error"]["code"] in {"refused", "query_failed"}
    assert str(folder) not in result["error"]["message"]
    assert digest_folder(folder) == before
    assert temp["data"]["rows"] == [[0]]
    assert check["data"]["rows"] == [[3]]


WRITES = {
    "rename": {"sql": "UPDATE items SET name = ? WHERE id = ?", "params": ["name", "id"], "write": True},
    "attach": {"sql": "ATTACH DATABASE ? AS other", "params": ["file"], "write": True},
    "vacuum_into": {"sql": "VACUUM INTO ?", "params": ["file"], "write": True},
    "names": {"sql": "SELECT name FROM items ORDER BY id"},
}


async def test_a_confirmed_write_runs_read_write_and_returns_rows_affected(
    tmp_path: Path, db_file: Path
) -> None:
    confirmer = ScriptedConfirmer(Decision.CONFIRMED)
    async with db_world(tmp_path, "sqlite", WRITES, profile=profile(db_file), write=True) as w:
        result = await w.broker.request(w.ctx, "app", "rename", {"name": "buoy", "id": 1}, confirmer)
        names = await w.call("names")
    assert result == {"ok": True, "data": {"rowsAffected": 1}, "error": None}
    assert names["data"]["rows"][0] == ["buoy"]
    shown = confirmer.shown[0]
    assert shown.title == "Confirm database write"
    assert dict(shown.fields)["SQL"] == WRITES["rename"]["sql"]
    assert dict(shown.fields)["Args"] == '["buoy",1]'
    assert str(db_file) not in shown.as_text()


async def test_a_declined_write_changes_nothing(tmp_path: Path, db_file: Path) -> None:
    before = digest_folder(db_file.parent)
    async with db_world(tmp_path, "sqlite", WRITES, profile=profile(db_file), write=True) as w:
        declined = await w.broker.request(
            w.ctx, "app", "rename", {"name": "buoy", "id": 1}, ScriptedConfirmer(Decision.DECLINED)
        )
        bare = await w.call("rename", {"name": "buoy", "id": 1})
    assert declined["error"]["code"] == "declined"
    assert bare["error"]["code"] == "confirmation_required"
    assert digest_folder(db_file.parent) == before


@pytest.mark.parametrize("query", ["attach", "vacuum_into"])
async def test_a_write_still_refuses_attach(tmp_path: Path, db_file: Path, query: str) -> None:
    other = db_file.parent / "other.db"
    async with db_world(tmp_path, "sqlite", WRITES, profile=profile(db_file), write=True) as w:
        result = await w.broker.request(w.ctx, "app", query, {"file": str(other)}, ScriptedConfirmer())
    assert result["error"]["code"] == "refused"
    assert not other.exists()


async def test_a_token_for_other_args_is_refused(tmp_path: Path, db_file: Path) -> None:
    async with db_world(tmp_path, "sqlite", WRITES, profile=profile(db_file), write=True) as w:
        summary = await w.broker.describe_write(w.ctx, "app", "rename", {"name": "buoy", "id": 1})
        result = await w.call("rename", {"name": "buoy", "id": 2}, confirmation=summary.token)
        names = await w.call("names")
    assert result["error"]["code"] == "confirmation_required"
    assert names["data"]["rows"][1] == ["compass"]
