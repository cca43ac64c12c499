"""db kind: broker overhead per query against the raw driver on the same database, same run.

The raw side keeps one open connection and runs the same statement (what an application with
a connection would do); Helm's side is the whole call: allowlist, argument checks, a pooled
connection with its read-only transaction and session reset, and the JSON-safe result. A second
row per engine times the engine's read alone (no broker), which shows what the broker's own
checks add. Round trips per warm call are counted by a relay in front of the server.

PostgreSQL and MariaDB also get both rows against Helm's own messages sent without the engine
(what the read-only steps cost the server, which no Python can save), and PostgreSQL a row of
those messages alone against the bare fetch: the floor of the first row.

A round trip to a server on the other core pays for waking that core, tens of microseconds that
come and go with where the scheduler put the two processes, on both sides alike: they can halve
a ratio or not from one second to the next. So PostgreSQL and MariaDB get their rows again with
this process and the server (every thread of both) on one core (``one_core``), which leaves
each side's own work alone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiomysql
import aiosqlite
import asyncpg

from broker import Broker, CallContext
from broker.kinds.db import mywire
from broker.kinds.db.adapter import DbKind
from broker.kinds.db.asyncpg_private import fetch_at_most
from broker.kinds.db.engine import QUERY_SECONDS, Engine
from broker.kinds.db.mysql import MysqlEngine
from broker.kinds.db.postgres import END_MESSAGES, PostgresEngine
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.values import FETCH_ROWS
from tests.bench.conftest import Bench
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.servers.databases import DatabaseServer
from tests.support import descendants
from tests.unit.kinds.db_relay import Relay
from tests.unit.kinds.db_setup import add_profile, server_profile

SQL = {"sqlite": "SELECT id, name, qty FROM items WHERE qty >= ? ORDER BY id",
       "mysql": "SELECT id, name, qty FROM items WHERE qty >= %s ORDER BY id",
       "postgres": "SELECT id, name, qty FROM items WHERE qty >= $1 ORDER BY id"}  # fmt: skip
MANIFEST_SQL = {**SQL, "mysql": SQL["sqlite"]}
CALLS = 20
ONE_CORE = "this process and the server on one core"


async def _extension(broker: Broker, tmp: Path, engine: str) -> CallContext:
    conn = {"id": "app", "kind": "db", "service": "main", "engine": engine,
            "queries": {"items": {"sql": MANIFEST_SQL[engine], "params": ["min"]}}}  # fmt: skip
    return await setup_extension(broker, tmp, manifest_dict([conn]))


async def _pair(
    bench: Bench, helm: Callable[[], Awaitable[Any]], raw: Callable[[], Awaitable[Any]]
) -> tuple[float, float]:
    # Interleave the two so a noisy neighbour slows both alike.
    helm_a = await bench.atime(helm, repeat=100)
    raw_a = await bench.atime(raw, repeat=100)
    helm_b = await bench.atime(helm, repeat=100)
    raw_b = await bench.atime(raw, repeat=100)
    return min(helm_a, helm_b), min(raw_a, raw_b)


def _listening(port: int) -> int:
    """The process listening on ``port`` of this machine, found by its socket's inode."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            next(rows)
            for row in rows:
                fields = row.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # LISTEN
                    sockets.add(f"socket:[{fields[9]}]")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") in sockets:
                        return int(pid)
    raise LookupError(f"nothing listens on port {port}")


@contextlib.contextmanager
def one_core(port: int) -> Iterator[None]:
    """Every thread of this process and of the server listening on ``port`` (its children too,
    and those it starts meanwhile, which take its affinity) on one CPU; as they were after."""
    server = _listening(port)
    cpu = min(os.sched_getaffinity(0))
    saved: dict[int, set[int]] = {}

    def pin(pids: set[int], cpus: set[int] | None) -> None:
        for pid in pids:
            with contextlib.suppress(OSError):  # a process or thread that ended meanwhile
                for task in os.listdir(f"/proc/{pid}/task"):
                    tid = int(task)
                    with contextlib.suppress(OSError):
                        saved.setdefault(tid, os.sched_getaffinity(tid))
                        os.sched_setaffinity(tid, {cpu} if cpus is None else cpus)

    every = os.sched_getaffinity(0)
    pin({os.getpid(), server, *descendants(server)}, None)
    try:
        yield
    finally:
        for tid, cpus in saved.items():
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, cpus)
        pin(descendants(server), every)  # the children it started meanwhile


async def _compare(
    bench: Bench,
    broker: Broker,
    ctx: CallContext,
    raw: Callable[[], Awaitable[Any]],
    engine: str,
    notes: tuple[str, str],
    where: str = "",
) -> None:
    """Two rows: the whole call through the broker, and the engine's read alone, each vs ``raw``
    (``where``: said after the engine's name)."""
    instances = itertools.count()
    kind = broker.database()
    assert isinstance(kind, DbKind)
    db = await kind.engine(kind.profile("main"))

    async def through_helm() -> object:
        # A fresh instance per call: the bench measures the query, not the rate limit.
        fresh = CallContext(ctx.workspace, ctx.extension, f"b{next(instances)}")
        result = await broker.call(fresh, "app", "items", {"min": 0})
        assert result["ok"], result
        return result["data"]

    async def engine_only() -> object:
        return await db.read(MANIFEST_SQL[engine], [0])

    name = {"sqlite": "SQLite", "postgres": "PostgreSQL", "mysql": "MariaDB"}[engine] + where
    helm, base = await _pair(bench, through_helm, raw)
    bench.record(f"db query through the broker ({name})", helm, base, note=notes[0])
    alone, base = await _pair(bench, engine_only, raw)
    bench.record(f"db engine read alone ({name})", alone, base, note=notes[1])


async def _round_trips(relay: Relay, call: Callable[[], Awaitable[Any]]) -> float:
    """Round trips per call on a warm connection through ``relay``."""
    await call()
    before = relay.round_trips
    for _ in range(CALLS):
        await call()
    return (relay.round_trips - before) / CALLS


async def _engine_round_trips(engine: Engine, relay: Relay, sql: str) -> float:
    try:
        return await _round_trips(relay, lambda: engine.read(sql, [0]))
    finally:
        await engine.aclose()


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

            note = "vs raw aiosqlite; 1 hop to the connection's thread per read (raw: 3)"
            await _compare(bench, broker, ctx, raw, "sqlite", (note, "vs raw aiosqlite"))


async def test_postgres_query_overhead_against_raw_asyncpg(
    bench: Bench, tmp_path: Path, postgres_server: DatabaseServer
):
    relay = Relay(postgres_server.port)
    await relay.start()
    prof, pw = server_profile(postgres_server, "helm_ro")
    helm_trips = await _engine_round_trips(
        PostgresEngine(DbProfile(**{**prof.__dict__, "port": relay.port}), pw), relay, SQL["postgres"]
    )
    raw_conn = await asyncpg.connect(**{**postgres_server.connect_kwargs("helm_ro"), "port": relay.port})
    raw_trips = await _round_trips(relay, lambda: raw_conn.fetch(SQL["postgres"], 0))
    await raw_conn.close()
    await relay.stop()
    trips = f"{helm_trips:g} round trips per read (raw: {raw_trips:g})"
    async with new_broker(tmp_path / "home") as broker:
        add_profile(broker, prof, pw)
        ctx = await _extension(broker, tmp_path, "postgres")
        conn = await asyncpg.connect(**postgres_server.connect_kwargs("helm_ro"))
        try:

            async def raw() -> object:
                return await conn.fetch(SQL["postgres"], 0)

            await _compare(
                bench, broker, ctx, raw, "postgres", (f"vs raw asyncpg; {trips}", "vs raw asyncpg")
            )
            same_steps = "vs the same messages on Helm's wire, without the engine"
            async with _postgres_same_steps(prof, pw) as raw_same:
                await _compare(bench, broker, ctx, raw_same, "postgres", (same_steps, same_steps))
                # The floor: what the server's work for read-only (the rollback, the next
                # transaction and the release check, pipelined with the read) costs by itself.
                steps, base = await _pair(bench, raw_same, raw)
                floor = "Helm's read-only steps on asyncpg, no Helm code around them, vs raw asyncpg"
                bench.record("db read-only steps alone (PostgreSQL)", steps, base, note=floor)
                with one_core(postgres_server.port):
                    note = f"{ONE_CORE}; vs raw asyncpg"
                    await _compare(bench, broker, ctx, raw, "postgres", (note, note), ", one core")
                    steps, base = await _pair(bench, raw_same, raw)
                    bench.record("db read-only steps alone (PostgreSQL, one core)", steps, base, note=note)
        finally:
            await conn.close()


@contextlib.asynccontextmanager
async def _postgres_same_steps(prof: DbProfile, pw: str) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    """Helm's pipelined read (the kept statement's Bind/Execute, then the call's end under the
    same Sync, on a connection waiting inside its read-only transaction) sent directly."""
    session = await PostgresEngine(prof, pw)._open()
    stmt = await session.conn.prepare(SQL["postgres"], name="bench_read")

    async def raw() -> object:
        tail = session.cap.pipeline(END_MESSAGES)
        try:
            rows = await fetch_at_most(stmt, [0], FETCH_ROWS, QUERY_SECONDS)
        finally:
            session.cap.unpipeline()
        answer = await tail
        assert answer.ran and not answer.failed and answer.status == b"T", answer
        return rows

    try:
        yield raw
    finally:
        await session.conn.close()


async def test_mysql_query_overhead_against_raw_aiomysql(
    bench: Bench, tmp_path: Path, mariadb_server: DatabaseServer
):
    relay = Relay(mariadb_server.port)
    await relay.start()
    prof, pw = server_profile(mariadb_server, "helm_ro")
    helm_trips = await _engine_round_trips(
        MysqlEngine(DbProfile(**{**prof.__dict__, "port": relay.port}), pw), relay, MANIFEST_SQL["mysql"]
    )
    raw_conn = await aiomysql.connect(**{**mariadb_server.connect_kwargs("helm_ro"), "port": relay.port})
    raw_trips = await _round_trips(relay, lambda: _aiomysql_query(raw_conn))
    await raw_conn.ensure_closed()
    await relay.stop()
    trips = f"{helm_trips:g} round trip(s) per read (raw: {raw_trips:g})"
    async with new_broker(tmp_path / "home") as broker:
        add_profile(broker, prof, pw)
        ctx = await _extension(broker, tmp_path, "mysql")
        conn = await aiomysql.connect(**mariadb_server.connect_kwargs("helm_ro"), autocommit=True)
        try:

            async def raw() -> object:
                return await _aiomysql_query(conn)

            await _compare(bench, broker, ctx, raw, "mysql", (f"vs raw aiomysql; {trips}", "vs raw aiomysql"))
            with one_core(mariadb_server.port):
                note = f"{ONE_CORE}; vs raw aiomysql"
                await _compare(bench, broker, ctx, raw, "mysql", (note, note), ", one core")
        finally:
            await conn.ensure_closed()
        same_steps = "vs the same commands on Helm's wire, without the engine"
        async with _mysql_same_steps(prof, pw) as raw_same:
            await _compare(bench, broker, ctx, raw_same, "mysql", (same_steps, same_steps))


@contextlib.asynccontextmanager
async def _mysql_same_steps(prof: DbProfile, pw: str) -> AsyncIterator[Callable[[], Awaitable[Any]]]:
    """Helm's pipelined read (begin, prepare, execute, reset, session settings) sent directly."""
    engine = MysqlEngine(prof, pw)
    session = await engine._open()
    w, sql = session.wire, MANIFEST_SQL["mysql"]

    async def raw() -> object:
        return await w.exchange([
            (mywire.query("START TRANSACTION READ ONLY"), w.ok), (mywire.prepare(sql), w.prepared),
            (mywire.execute(mywire.LAST_PREPARED, [0]), lambda: w.rows(binary=True)), *session.tail(),
        ])  # fmt: skip

    try:
        yield raw
    finally:
        await session.conn.ensure_closed()


async def _aiomysql_query(conn: aiomysql.Connection) -> object:
    async with conn.cursor() as cur:
        await cur.execute(SQL["mysql"], (0,))
        return await cur.fetchall()
