"""PostgreSQL through asyncpg: one statement per call in a read-only transaction.

Each read runs its statement over the extended protocol (which refuses more than one statement)
inside ``BEGIN ISOLATION LEVEL READ COMMITTED, READ ONLY``, on a session whose default is
read-only too. Then two statements end the call: ``ROLLBACK AND CHAIN``, which opens the next
call's transaction with the same characteristics, and the release of what outlives a rollback,
which also checks that the new transaction is read-only. Prepared once per connection, they are
bound and run in the same flush as the statement, under its one Sync (``WireCap.pipeline``): a
warm read is one round trip, two the first time a connection sees a statement. When the
statement fails the server skips them, and one simple-protocol message (``ROLLBACK``, ``BEGIN``
and the release) ends the call instead. A connection whose closing statements failed, or did
not leave it inside the next transaction, is dropped; a pooled connection waits inside a
transaction that holds no snapshot and no lock, and keeps its prepared statements.

What a read costs beyond the bare statement is mostly the server's work on those two statements
(a portal each, and a set-returning function scan for the prepared-statement check, the dearest
part): sent alone on asyncpg's connection, those messages take about 1.5 times a bare ``fetch``
of a small indexed read, before any of Helm's own work. That is the price of rolling every
read back and leaving the session clean; tests/bench/test_bench_db.py measures it on a row of
its own ("db read-only steps alone").

A rolled-back transaction takes with it everything a statement can change in its session:
settings (``SET``, ``set_config``), ``SET ROLE``, ``LISTEN`` (which only acts on commit),
cursors (even ``WITH HOLD``) and temporary objects. What outlives it: session advisory locks,
released in that same message, and SQL-level ``PREPARE``, after which the connection is dropped
instead of reused. A write runs in ``BEGIN READ WRITE`` … ``COMMIT`` and its connection is
never reused (a commit keeps whatever the statement set up). On timeout asyncpg sends
PostgreSQL's cancel request, so the query stops on the server too; a server-side
``statement_timeout`` slightly above Helm's limit is the backstop.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from broker.errors import CallError, ErrorCode
from broker.kinds.db.asyncpg_private import (
    CLOSE_PORTAL,
    TailAnswer,
    WireCap,
    bind_execute_message,
    fetch_at_most,
)
from broker.kinds.db.engine import (
    CONNECT_SECONDS,
    QUERY_SECONDS,
    Pool,
    Written,
    query_failed,
    timeout_error,
    unavailable,
    unreachable,
)
from broker.kinds.db.pgtypes import coerce
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.values import FETCH_ROWS, MAX_ROW_BYTES, Converter, RowBudget, Scalar, bigint, plain

# Errors that mean the link to the server is gone, not that the query was wrong.
LOST = (OSError, asyncpg.exceptions.PostgresConnectionError, asyncpg.exceptions.InterfaceError)
QUERY_CANCELED = "57014"
# What the server may send for one read before Helm cuts the connection: asyncpg would otherwise
# hold every row of a huge result (up to FETCH_ROWS of them) before Helm could count them. Rows
# take up to four times more room on the wire than in JSON (an int4 zero: 8 bytes for "0,"),
# more only for columns made almost wholly of empty arrays (16 bytes for "[],").
MAX_WIRE_BYTES = 4 * MAX_ROW_BYTES
WIRE_TOO_LARGE = "the query returned more than 1 MiB of row data; select less"
# A kept statement that no longer fits: deallocated by a query, planned for an old schema, or
# describing rows of another shape than the server now sends (asyncpg's own protocol check).
STALE_STATEMENT = (
    asyncpg.exceptions.InvalidSQLStatementNameError,
    asyncpg.exceptions.InvalidCachedStatementError,
    asyncpg.exceptions.InternalClientError,
)

ROLE_SQL = """
SELECT r.rolsuper,
       r.rolcreaterole OR r.rolcreatedb OR r.rolbypassrls AS roladmin,
       EXISTS (
         SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
           AND n.nspname NOT IN ('pg_catalog', 'information_schema')
           AND n.nspname NOT LIKE 'pg_toast%'
           AND (pg_get_userbyid(c.relowner) = current_user
                OR has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE'))
       ) AS canwrite,
       EXISTS (
         SELECT 1 FROM pg_namespace n
         WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_%'
           AND has_schema_privilege(n.oid, 'CREATE')
       ) AS cancreate
FROM pg_roles r WHERE r.rolname = current_user
"""


# A read's transaction. READ COMMITTED: the statement gets a snapshot of its own, even though
# Helm's check below ran first in the same transaction (one statement sees no difference).
BEGIN_READ = "BEGIN ISOLATION LEVEL READ COMMITTED, READ ONLY"
# Ends a call and opens the next one's transaction, in one round trip (see the module's doc).
# Inside that transaction Helm then releases session advisory locks and checks for SQL-level
# prepared statements, which outlive a rollback: for each one the CAST fails (at run time, row
# by row, so it cannot be folded away) and the connection is dropped. The last CAST fails, and
# drops the connection too, unless the new transaction is read-only. None of it takes a lock,
# and a READ COMMITTED snapshot ends with its statement: the waiting transaction holds nothing.
# Being a query, the check also takes the transaction's first snapshot, after which no statement
# may make it read-write or change its isolation (PostgreSQL refuses: "must be called before
# any query").
RELEASE_SQL = (
    "SELECT pg_catalog.pg_advisory_unlock_all(), (SELECT count(CAST('PREPARE ' || name AS int)) "
    "FROM pg_catalog.pg_prepared_statement() WHERE from_sql), "
    "CAST(NULLIF(pg_catalog.current_setting('transaction_read_only'), 'on') AS int)"
)
NEXT_CALL_SQL = f"ROLLBACK; {BEGIN_READ}; {RELEASE_SQL}"
# After a read that succeeded, its transaction's characteristics are still BEGIN_READ's (fixed
# by the first snapshot, which the release check, or on a new connection its prepare, took), so
# ROLLBACK AND CHAIN opens the next call's transaction as BEGIN_READ would, with one statement
# fewer for the server than ROLLBACK, BEGIN; the release check then makes sure it is read-only.
END_STATEMENTS = {
    "helm_end_rollback": "ROLLBACK AND CHAIN",
    "helm_end_release": RELEASE_SQL,
}
"""The end of a call as prepared statements, bound and run with each read (``_fetch``)."""
END_MESSAGES = b"".join(bind_execute_message(name) for name in END_STATEMENTS) + CLOSE_PORTAL
IDLE_SECONDS = 240.0
"""A pooled connection waits inside its BEGIN at most this long (the server ends it later)."""
STATEMENTS_KEPT = 64


@dataclass(frozen=True)
class _Statement:
    stmt: Any  # asyncpg.prepared_stmt.PreparedStatement
    param_types: list[str]
    columns: list[str]
    converters: list[Converter]


@dataclass
class _PostgresSession:
    conn: asyncpg.Connection
    cap: WireCap
    statements: OrderedDict[str, _Statement] = field(default_factory=OrderedDict)
    names: Iterator[int] = field(default_factory=itertools.count)
    ends: list[Any] = field(default_factory=list)
    """asyncpg's handles on the prepared ``END_STATEMENTS``, kept so it never closes them."""
    tail: asyncio.Future[TailAnswer] | None = None
    """The answer to the closing message sent with the last read, while it is awaited."""


class _StalePostgresConnection(Exception):
    """A pooled connection or one of its kept statements turned out gone: retry the read once."""


class PostgresEngine:
    def __init__(self, profile: DbProfile, password: str | None) -> None:
        self._connect_args: dict[str, Any] = {
            "host": profile.host,
            "port": profile.port,
            "user": profile.user,
            "database": profile.database,
            "password": password,
        }
        self._secrets = (profile.host, password, f"{profile.host}:{profile.port}")
        self._pool: Pool[_PostgresSession] = Pool(self._open, _close, max_idle=IDLE_SECONDS)

    async def _open(self) -> _PostgresSession:
        try:
            conn = await asyncpg.connect(
                **self._connect_args,
                timeout=CONNECT_SECONDS,
                # Helm keeps its own prepared statements per connection (_statement).
                statement_cache_size=0,
                server_settings={
                    "application_name": "helm",
                    "default_transaction_read_only": "on",
                    "statement_timeout": str(int(QUERY_SECONDS * 1000) + 1000),
                    "idle_in_transaction_session_timeout": str(int(IDLE_SECONDS * 1000) + 60000),
                },
            )
        except (
            asyncpg.exceptions.InvalidPasswordError,
            asyncpg.exceptions.InvalidAuthorizationSpecificationError,
        ) as exc:
            raise unavailable(
                "Helm could not sign in to the database (check the profile's user and password)"
            ) from exc
        except asyncpg.exceptions.InvalidCatalogNameError as exc:
            raise unavailable("the profile's database does not exist on the server") from exc
        except (*LOST, asyncpg.PostgresError, TimeoutError) as exc:
            raise unreachable(exc) from exc
        try:
            await conn.execute(BEGIN_READ, timeout=CONNECT_SECONDS)
            ends = [
                await conn.prepare(sql, name=name, timeout=CONNECT_SECONDS)
                for name, sql in END_STATEMENTS.items()
            ]
        except (*LOST, asyncpg.PostgresError, TimeoutError) as exc:
            conn.terminate()
            raise unreachable(exc) from exc
        return _PostgresSession(conn, WireCap(conn), ends=ends)

    # -- reads ------------------------------------------------------------------------------
    async def read(self, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        for _attempt in range(2):
            session, fresh = await self._pool.take()
            try:
                return await self._guarded(session, sql, args, retry=not fresh)
            except _StalePostgresConnection:
                continue
        raise unavailable("the database server stopped answering")

    async def _guarded(
        self, s: _PostgresSession, sql: str, args: Sequence[Scalar], *, retry: bool
    ) -> dict[str, Any]:
        """Run the read within the time limit, then end the call and give the session back."""
        try:
            result = await self._fetch(s, sql, args)
        except TimeoutError as exc:
            # asyncpg cancelled the query on the server; its cancel request may still reach the
            # closing message, so the connection is not kept.
            await self._pool.discard(s)
            raise timeout_error() from exc
        except _StalePostgresConnection:
            await self._pool.discard(s)
            if retry:
                raise
            raise unavailable("the database server stopped answering") from None
        except CallError as err:
            lost = err.code is ErrorCode.UNAVAILABLE or s.cap.over
            await (self._pool.discard(s) if lost else self._next_call(s))
            raise
        except BaseException:
            await self._pool.discard(s)
            raise
        await self._next_call(s)
        return result

    async def _next_call(self, s: _PostgresSession) -> None:
        """Roll back, release, open the next call's transaction; or drop the connection.

        The closing statements went with the read when it got as far as its Bind/Execute: then
        their answer came in the same flush as the rows."""
        tail, s.tail = s.tail, None
        if tail is not None:
            try:
                if not tail.done():  # most often it came with the rows
                    async with asyncio.timeout(CONNECT_SECONDS):
                        await tail
                answer = tail.result()
            except (TimeoutError, ConnectionError):
                await self._pool.discard(s)
                return
            if answer.ran:
                clean = not answer.failed and answer.status == b"T"
                await (self._pool.give(s) if clean else self._pool.discard(s))
                return
            # The statement failed, so the server skipped them: end the call on its own.
        try:
            await s.conn.execute(NEXT_CALL_SQL, timeout=CONNECT_SECONDS)
        except (*LOST, asyncpg.PostgresError, TimeoutError):
            await self._pool.discard(s)
            return
        await self._pool.give(s)

    async def _fetch(self, s: _PostgresSession, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        """The statement's rows within the limits.

        asyncpg keeps the time limit with its own timer (cheaper than a task-level timeout on
        every call) and on timeout sends PostgreSQL's cancel request, so the query stops on the
        server too.
        """
        kept = sql in s.statements
        deadline = time.monotonic() + QUERY_SECONDS
        s.cap.arm(MAX_WIRE_BYTES)
        try:
            st = await self._statement(s, sql, QUERY_SECONDS)
            values = coerce(args, st.param_types)
            budget = RowBudget(st.columns, st.converters)
            left = max(deadline - time.monotonic(), 0.001)
            s.tail = s.cap.pipeline(END_MESSAGES)
            try:
                rows = await fetch_at_most(st.stmt, values, FETCH_ROWS, left)
            finally:
                if not s.cap.unpipeline():
                    s.tail = None  # asyncpg wrote nothing: the call is ended on its own
            budget.add_all(rows)
            return budget.result()
        except TimeoutError:
            raise  # an OSError too, but not a lost link
        except STALE_STATEMENT as exc:
            if kept:
                raise _StalePostgresConnection from exc  # retried on a new connection, which prepares it anew
            if isinstance(exc, asyncpg.PostgresError):
                raise self._error(exc) from exc
            raise unavailable("the database server's answer could not be read") from exc
        except LOST as exc:
            if s.cap.over:  # Helm cut the connection: the answer was too large, not lost
                raise CallError(ErrorCode.TOO_LARGE, WIRE_TOO_LARGE) from exc
            raise _StalePostgresConnection from exc
        except asyncpg.PostgresError as exc:
            raise self._error(exc) from exc
        finally:
            s.cap.disarm()

    async def _statement(self, s: _PostgresSession, sql: str, seconds: float) -> _Statement:
        """The connection's prepared statement for ``sql`` (prepared on first use, then kept)."""
        st = s.statements.get(sql)
        if st is not None:
            s.statements.move_to_end(sql)
            return st
        # Named: with its statement cache off, asyncpg would otherwise make an unnamed statement
        # that is parsed again on every execution.
        stmt = await s.conn.prepare(sql, name=f"helm_{next(s.names)}", timeout=seconds)
        attrs = stmt.get_attributes()
        st = _Statement(
            stmt, [t.name for t in stmt.get_parameters()], [a.name for a in attrs],
            [bigint if _is_int8(a.type.name) else plain for a in attrs],
        )  # fmt: skip
        s.statements[sql] = st
        if len(s.statements) > STATEMENTS_KEPT:
            s.statements.popitem(last=False)
        return st

    # -- writes -----------------------------------------------------------------------------
    async def write(self, sql: str, args: Sequence[Scalar]) -> Written:
        """One statement in BEGIN READ WRITE … COMMIT; the connection is closed afterwards."""
        s = await self._write_session()
        try:
            async with asyncio.timeout(QUERY_SECONDS):
                try:
                    stmt = await s.conn.prepare(sql)
                    values = coerce(args, [t.name for t in stmt.get_parameters()])
                    await stmt.fetch(*values)
                    status = stmt.get_statusmsg() or ""
                    await s.conn.execute("COMMIT")
                except LOST as exc:
                    raise unavailable("the database server stopped answering") from exc
                except asyncpg.PostgresError as exc:
                    raise self._error(exc) from exc
        except TimeoutError as exc:
            raise timeout_error() from exc
        finally:
            await self._pool.discard(s)
        return Written(_rows_affected(status))

    async def _write_session(self) -> _PostgresSession:
        """A session inside BEGIN READ WRITE; a pooled one that lost its server is replaced once."""
        for _attempt in range(2):
            s, fresh = await self._pool.take()
            try:
                await s.conn.execute("ROLLBACK; BEGIN READ WRITE", timeout=CONNECT_SECONDS)
            except (*LOST, TimeoutError, asyncpg.PostgresError) as exc:
                await self._pool.discard(s)
                if fresh:
                    raise unavailable("the database server stopped answering") from exc
                continue
            return s
        raise unavailable("the database server stopped answering")

    def _error(self, exc: asyncpg.PostgresError) -> CallError:
        if getattr(exc, "sqlstate", None) == QUERY_CANCELED:
            return timeout_error()
        message = str(getattr(exc, "message", "") or "")
        return query_failed(message, self._secrets)

    async def role_warnings(self) -> list[str]:
        """What the profile's role may do beyond reading (for Settings and ``helm db add``)."""
        try:
            rows = (await self.read(ROLE_SQL, []))["rows"]
        except CallError as err:
            raise unavailable("Helm could not read the role's privileges") from err
        warnings: list[str] = []
        if not rows:
            return warnings
        superuser, admin, canwrite, cancreate = rows[0]
        if superuser:
            warnings.append(
                "the role is a superuser: functions it can call may write, read files or run "
                "programs outside the read-only transaction; use a role that can only SELECT"
            )
        if admin:
            warnings.append("the role can create roles or databases, or bypass row security")
        if canwrite or cancreate:
            warnings.append(
                "the role can write (it owns tables, or may INSERT/UPDATE/DELETE or CREATE): Helm "
                "keeps reads read-only, but functions can have side effects outside the "
                "transaction; a read-only role is safer"
            )
        return warnings

    async def aclose(self) -> None:
        await self._pool.aclose()


def _is_int8(type_name: str) -> bool:
    """``int8`` and its arrays (asyncpg names them ``_int8`` or ``int8[]``)."""
    return type_name.strip("_[]") == "int8"


def _rows_affected(status: str) -> int:
    """The row count of a command tag (``UPDATE 3``, ``INSERT 0 2``); 0 when it has none."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


async def _close(s: _PostgresSession) -> None:
    await s.conn.close(timeout=CONNECT_SECONDS)
