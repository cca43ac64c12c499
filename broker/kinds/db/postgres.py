"""PostgreSQL through asyncpg: one statement per call in a read-only transaction.

Each read runs as ``BEGIN READ ONLY`` → the statement over the extended protocol (which refuses
more than one statement) → ``ROLLBACK``, on a session whose default is read-only too. A write
runs in ``BEGIN READ WRITE`` … ``COMMIT``. A query can still change its session without writing
(settings, advisory locks, LISTEN, prepared statements, cursors WITH HOLD), so before a pooled
connection is used again Helm rolls back and resets all of it (what ``DISCARD ALL`` does). On
timeout asyncpg sends PostgreSQL's cancel request, so the query stops on the server too; a
server-side ``statement_timeout`` slightly above Helm's limit is the backstop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import asyncpg

from broker.errors import CallError, ErrorCode
from broker.kinds.db.engine import (
    CONNECT_SECONDS,
    QUERY_SECONDS,
    Pool,
    Written,
    query_failed,
    timeout_error,
    unavailable,
)
from broker.kinds.db.pgtypes import coerce
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.values import FETCH_ROWS, RowBudget, Scalar, bigint, plain

# Errors that mean the link to the server is gone, not that the query was wrong.
LOST = (OSError, asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.InterfaceError)
QUERY_CANCELED = "57014"

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
        self._pool: Pool[asyncpg.Connection] = Pool(self._open, _close)

    async def _open(self) -> asyncpg.Connection:
        try:
            return await asyncpg.connect(
                **self._connect_args,
                timeout=CONNECT_SECONDS,
                # No named statements to keep: DISCARD ALL deallocates them between calls.
                statement_cache_size=0,
                server_settings={
                    "application_name": "helm",
                    "default_transaction_read_only": "on",
                    "statement_timeout": str(int(QUERY_SECONDS * 1000) + 1000),
                    "idle_in_transaction_session_timeout": "60000",
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
            raise unavailable("Helm cannot reach the database server") from exc

    async def _begin(self, mode: str) -> asyncpg.Connection:
        """A connection inside ``BEGIN <mode>``; a pooled one that lost its server is replaced once."""
        for _attempt in range(2):
            conn, fresh = await self._pool.take()
            try:
                await conn.execute(f"BEGIN {mode}", timeout=CONNECT_SECONDS)
            except (*LOST, TimeoutError, asyncpg.PostgresError) as exc:
                await self._pool.discard(conn)
                if fresh:
                    raise unavailable("the database server stopped answering") from exc
                continue
            return conn
        raise unavailable("the database server stopped answering")

    async def read(self, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        conn = await self._begin("READ ONLY")
        try:
            async with asyncio.timeout(QUERY_SECONDS):
                result = await self._fetch(conn, sql, args)
        except TimeoutError as exc:
            await self._give(conn)  # asyncpg cancelled the query on the server; reset or drop
            raise timeout_error() from exc
        except CallError as err:
            await self._release(conn, lost=err.code is ErrorCode.UNAVAILABLE)
            raise
        except BaseException:
            await self._pool.discard(conn)
            raise
        await self._give(conn)
        return result

    async def _fetch(self, conn: asyncpg.Connection, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        try:
            stmt = await conn.prepare(sql)
            values = coerce(args, [t.name for t in stmt.get_parameters()])
            attrs = stmt.get_attributes()
            budget = RowBudget(
                [a.name for a in attrs], [bigint if _is_int8(a.type.name) else plain for a in attrs]
            )
            # One Bind/Execute for up to FETCH_ROWS rows: memory stays bounded and the limit
            # is seen without reading the rest of a large result.
            async for record in stmt.cursor(*values, prefetch=FETCH_ROWS):
                budget.add(record)
            return budget.result()
        except asyncpg.PostgresError as exc:
            raise self._error(exc) from exc
        except LOST as exc:
            raise unavailable("the database server stopped answering") from exc

    async def write(self, sql: str, args: Sequence[Scalar]) -> Written:
        conn = await self._begin("READ WRITE")
        try:
            async with asyncio.timeout(QUERY_SECONDS):
                try:
                    stmt = await conn.prepare(sql)
                    values = coerce(args, [t.name for t in stmt.get_parameters()])
                    await stmt.fetch(*values)
                    status = stmt.get_statusmsg() or ""
                    await conn.execute("COMMIT")
                except asyncpg.PostgresError as exc:
                    raise self._error(exc) from exc
                except LOST as exc:
                    raise unavailable("the database server stopped answering") from exc
        except TimeoutError as exc:
            await self._give(conn)
            raise timeout_error() from exc
        except CallError as err:
            await self._release(conn, lost=err.code is ErrorCode.UNAVAILABLE)
            raise
        except BaseException:
            await self._pool.discard(conn)
            raise
        await self._give(conn)
        return Written(_rows_affected(status))

    async def _give(self, conn: asyncpg.Connection) -> None:
        """Reset ``conn`` and keep it for the next call, or close it when it cannot be reset."""
        try:
            await _reset(conn)
        except (*LOST, asyncpg.PostgresError, TimeoutError):
            await self._pool.discard(conn)
            return
        await self._pool.give(conn)

    async def _release(self, conn: asyncpg.Connection, *, lost: bool) -> None:
        if lost:
            await self._pool.discard(conn)
        else:
            await self._give(conn)

    def _error(self, exc: asyncpg.PostgresError) -> CallError:
        if getattr(exc, "sqlstate", None) == QUERY_CANCELED:
            return timeout_error()
        message = str(getattr(exc, "message", "") or "")
        return query_failed(message, self._secrets)

    async def role_warnings(self) -> list[str]:
        """What the profile's role may do beyond reading (for Settings and ``helm db add``)."""
        conn = await self._begin("READ ONLY")
        try:
            row = await conn.fetchrow(ROLE_SQL, timeout=QUERY_SECONDS)
        except (asyncpg.PostgresError, *LOST, TimeoutError) as exc:
            await self._pool.discard(conn)
            raise unavailable("Helm could not read the role's privileges") from exc
        await self._give(conn)
        warnings: list[str] = []
        if row is None:
            return warnings
        if row["rolsuper"]:
            warnings.append(
                "the role is a superuser: functions it can call may write, read files or run "
                "programs outside the read-only transaction; use a role that can only SELECT"
            )
        if row["roladmin"]:
            warnings.append("the role can create roles or databases, or bypass row security")
        if row["canwrite"] or row["cancreate"]:
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


# What DISCARD ALL does, step by step: DISCARD ALL itself refuses to run in the implicit
# transaction of a multi-statement query, and one round trip per reset matters.
RESET_SQL = (
    "ROLLBACK; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; CLOSE ALL; UNLISTEN *; "
    "SELECT pg_advisory_unlock_all(); DEALLOCATE ALL; DISCARD PLANS; DISCARD SEQUENCES; DISCARD TEMP"
)


async def _reset(conn: asyncpg.Connection) -> None:
    await conn.execute(RESET_SQL, timeout=CONNECT_SECONDS)


async def _close(conn: asyncpg.Connection) -> None:
    await conn.close(timeout=CONNECT_SECONDS)
