"""db kind: broker overhead per query against the raw driver on the same database, same run.

The raw side keeps one open connection and runs the same statement (what an application with
a connection would do); Helm's side is the whole call: allowlist, argument checks, a pooled
connection with its read-only transaction and session reset, and the JSON-safe result.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomysql
import aiosqlite
import asyncpg

from broker import Broker, CallContext
from broker.kinds.db.postgres import NEXT_CALL_SQL
from broker.kinds.db.profiles import DbProfile
from tests.bench.conftest import Bench
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.servers.databases import DatabaseServer
from tests.unit.kinds.db_setup import add_profile, server_profile

SQL = {"sqlite": "SELECT id, name, qty FROM items WHERE qty >= ? ORDER BY id",
       "mysql": "SELECT id, name, qty FROM items WHERE qty >= %s ORDER BY id",
       "postgres": "SELECT id, name, qty FROM items WHERE qty >= $1 ORDER BY id"}  # fmt: skip
MANIFEST_SQL = {**SQL, "mysql": SQL["sqlite"]}


async def _extension(broker: Broker, tmp: Path, engine: str) -> CallContext:
    conn = {"id": "app", "kind": "db", "service": "main", "engine": engine,
            "queries": {"items": {"sql": MANIFEST_SQL[engine], "params": ["min"]}}}  # fmt: skip
    return await setup_extension(broker, tmp, manifest_dict([conn]))


async def _compare(
    bench: Bench, broker: Broker, ctx: CallContext, raw: Callable[[], Awaitable[Any]], name: str, note: str
) -> None:
    instances = itertools.count()

    async def through_helm() -> object:
        # A fresh instance per call: the bench measures the query, not the rate limit.
        fresh = CallContext(ctx.workspace, ctx.extension, f"b{next(instances)}")
        result = await broker.call(fresh, "app", "items", {"min": 0})
        assert result["ok"], result
        return result["data"]

    # Interleave the two so a noisy neighbour slows both alike.
    helm_a = await bench.atime(through_helm, repeat=100)
    raw_a = await bench.atime(raw, repeat=100)
    helm_b = await bench.atime(through_helm, repeat=100)
    raw_b = await bench.atime(raw, repeat=100)
    helm, base = min(helm_a, helm_b), min(raw_a, raw_b)
    bench.record(name, helm, base, note=note)
    assert helm > 0


async def test_sqlite_query_overhead_against_raw_aiosqlite(bench: Bench, tmp_path: Path):
    path = tmp_path / "bench.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, qty INTEGER);"
            "INSERT INTO items (name, qty) VALUES ('anchor', 3), ('compass', 1), ('sextant', 0);"
        )
    conn.close()
    async with new_broker(tmp_path / "home") as broker:
        add_profile(broker, DbProfile(name="main", engine="sqlite", path=str(path)))
        ctx = await _extension(broker, tmp_path, "sqlite")
        async with aiosqlite.connect(path) as db:

            async def raw() -> object:
                async with db.execute(SQL["sqlite"], (0,)) as cur:
                    return await cur.fetchall()

            await _compare(
                bench, broker, ctx, raw, "db query through the broker (SQLite)", "vs raw aiosqlite"
            )


async def test_postgres_query_overhead_against_raw_asyncpg(
    bench: Bench, tmp_path: Path, postgres_server: DatabaseServer
):
    async with new_broker(tmp_path / "home") as broker:
        add_profile(broker, *server_profile(postgres_server, "helm_ro"))
        ctx = await _extension(broker, tmp_path, "postgres")
        conn = await asyncpg.connect(**postgres_server.connect_kwargs("helm_ro"))
        try:

            async def raw() -> object:
                return await conn.fetch(SQL["postgres"], 0)

            await _compare(
                bench, broker, ctx, raw, "db query through the broker (PostgreSQL)", "vs raw asyncpg"
            )

            # The same protocol steps Helm takes, without Helm: what read-only costs by itself
            # (the statement prepared once and kept, the connection waiting inside BEGIN).
            await conn.execute("BEGIN READ ONLY")
            stmt = await conn.prepare(SQL["postgres"])

            async def raw_guarded() -> object:
                rows = [r async for r in stmt.cursor(0, prefetch=1001)]
                await conn.execute(NEXT_CALL_SQL)
                return rows

            await _compare(
                bench, broker, ctx, raw_guarded, "db query through the broker (PostgreSQL)",
                "vs asyncpg taking Helm's read-only steps",
            )  # fmt: skip
        finally:
            await conn.close()


async def test_mysql_query_overhead_against_raw_aiomysql(
    bench: Bench, tmp_path: Path, mariadb_server: DatabaseServer
):
    async with new_broker(tmp_path / "home") as broker:
        add_profile(broker, *server_profile(mariadb_server, "helm_ro"))
        ctx = await _extension(broker, tmp_path, "mysql")
        conn = await aiomysql.connect(**mariadb_server.connect_kwargs("helm_ro"), autocommit=True)
        try:

            async def raw() -> object:
                async with conn.cursor() as cur:
                    await cur.execute(SQL["mysql"], (0,))
                    return await cur.fetchall()

            await _compare(
                bench, broker, ctx, raw, "db query through the broker (MariaDB)", "vs raw aiomysql"
            )

            async def raw_guarded() -> object:
                # The same protocol steps Helm takes, without Helm: what read-only costs by itself.
                async with conn.cursor() as cur:
                    await cur.execute("START TRANSACTION READ ONLY")
                    await cur.execute(SQL["mysql"], (0,))
                    rows = await cur.fetchall()
                await conn._execute_command(0x1F, b"")  # COM_RESET_CONNECTION
                await conn._read_ok_packet()
                async with conn.cursor() as cur:
                    await cur.execute("SET SESSION TRANSACTION READ ONLY")
                return rows

            await _compare(
                bench, broker, ctx, raw_guarded, "db query through the broker (MariaDB)",
                "vs aiomysql taking Helm's read-only steps",
            )  # fmt: skip
        finally:
            conn.close()
