"""MySQL and MariaDB through aiomysql: a read-only session, one statement per call.

* aiomysql always asks the server for multiple statements per query; Helm clears that
  capability before the handshake, so ``SELECT 1; DELETE …`` is a syntax error on the server.
  LOCAL INFILE is not offered either: the server cannot ask Helm for a local file.
* The session is read-only (``SET SESSION TRANSACTION READ ONLY``) and each read runs in
  ``START TRANSACTION READ ONLY``. MySQL still lets such a transaction write temporary tables and
  ``SELECT … INTO OUTFILE`` write a server file, so reads must also pass ``rules.read_problem``.
* Before a pooled connection is used again Helm sends COM_RESET_CONNECTION (user variables,
  temporary tables, session settings, locks and the open transaction all go) and makes the
  session read-only again.
* Arguments become SQL literals escaped by the driver for the connection, placed at the
  ``?`` positions the scan found outside strings and comments; the driver's own
  ``%``-formatting is never used, so a literal ``%`` in the SQL needs no escaping.
* On timeout Helm sends ``KILL QUERY`` from a second connection and drops the first.
* Dates and times are the server's text (the driver's date conversion is turned off).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import aiomysql
import pymysql  # type: ignore[import-untyped]
from pymysql.constants import CLIENT, FIELD_TYPE  # type: ignore[import-untyped]

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
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.rules import read_problem
from broker.kinds.db.sqlscan import interpolate, scan
from broker.kinds.db.values import FETCH_ROWS, RowBudget, Scalar, bigint, plain

FETCH_CHUNK = 250
COM_RESET_CONNECTION = 0x1F
ACCESS_DENIED = frozenset({1044, 1045, 1698})
UNKNOWN_DATABASE = 1049
INTERRUPTED = frozenset({1317, 1969, 3024})  # query interrupted / statement or execution time exceeded
CLIENT_ERRORS = range(2000, 3000)  # the client library's own codes (lost link, cannot connect)
LOST = (OSError, pymysql.err.InterfaceError, asyncio.IncompleteReadError)
READ_ONLY_SESSION = "SET SESSION TRANSACTION READ ONLY"
LOCAL_FILE_REFUSED = "Helm never sends local files to the database server (LOAD DATA LOCAL is off)"


# The privileges of the signed-in account (information_schema lists other accounts' grants too
# when the account may see them, hence the GRANTEE filter).
PRIVILEGES_SQL = """
SELECT PRIVILEGE_TYPE FROM (
  SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES
  UNION SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES
    WHERE TABLE_SCHEMA = DATABASE()
  UNION SELECT GRANTEE, PRIVILEGE_TYPE FROM information_schema.TABLE_PRIVILEGES
    WHERE TABLE_SCHEMA = DATABASE()
) p
WHERE GRANTEE = CONCAT("'", SUBSTRING_INDEX(CURRENT_USER(), '@', 1), "'@'",
                       SUBSTRING_INDEX(CURRENT_USER(), '@', -1), "'")
"""
ADMIN_PRIVILEGES = frozenset({"SUPER", "FILE", "SHUTDOWN", "PROCESS", "CREATE USER", "RELOAD"})
WRITE_PRIVILEGES = frozenset(
    {"INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "INDEX", "CREATE TEMPORARY TABLES",
     "CREATE ROUTINE", "ALTER ROUTINE", "TRIGGER", "EVENT", "CREATE VIEW", "LOCK TABLES", "EXECUTE"}
)  # fmt: skip


def _decoders() -> dict[int, Any]:
    conv: dict[int, Any] = dict(pymysql.converters.decoders)
    for field_type in (FIELD_TYPE.DATE, FIELD_TYPE.DATETIME, FIELD_TYPE.TIMESTAMP, FIELD_TYPE.TIME):
        conv.pop(field_type, None)  # keep the server's text
    return conv


DECODERS = _decoders()


class MysqlEngine:
    def __init__(self, profile: DbProfile, password: str | None) -> None:
        self._connect_args: dict[str, Any] = {
            "host": profile.host,
            "port": profile.port,
            "user": profile.user,
            "db": profile.database,
            "password": password or "",
        }
        self._secrets = (profile.host, password, f"{profile.host}:{profile.port}")
        self._pool: Pool[aiomysql.Connection] = Pool(self._open, _reset, _close)

    async def _connect(self) -> aiomysql.Connection:
        conn = aiomysql.Connection(
            **self._connect_args,
            charset="utf8mb4",
            connect_timeout=CONNECT_SECONDS,
            autocommit=True,
            local_infile=False,
            conv=DECODERS,
            program_name="helm",
        )
        # aiomysql adds MULTI_STATEMENTS to every connection; the handshake must not offer it.
        conn.client_flag &= ~(CLIENT.MULTI_STATEMENTS | CLIENT.LOCAL_FILES)
        try:
            await conn._connect()
        except pymysql.err.OperationalError as exc:
            code = exc.args[0] if exc.args else 0
            if code in ACCESS_DENIED:
                raise unavailable(
                    "Helm could not sign in to the database (check the profile's user and password)"
                ) from exc
            if code == UNKNOWN_DATABASE:
                raise unavailable("the profile's database does not exist on the server") from exc
            raise unavailable("Helm cannot reach the database server") from exc
        except (*LOST, pymysql.err.MySQLError, TimeoutError) as exc:
            raise unavailable("Helm cannot reach the database server") from exc
        return conn

    async def _open(self) -> aiomysql.Connection:
        conn = await self._connect()
        try:
            await _query(conn, READ_ONLY_SESSION)
        except (*LOST, pymysql.err.MySQLError) as exc:
            conn.close()
            raise unavailable("Helm cannot reach the database server") from exc
        return conn

    async def _begin(self, mode: str) -> aiomysql.Connection:
        """A connection inside ``START TRANSACTION <mode>``; a dead pooled one is replaced once."""
        for _attempt in range(2):
            conn, fresh = await self._pool.take()
            try:
                async with asyncio.timeout(CONNECT_SECONDS):
                    await _query(conn, f"START TRANSACTION {mode}")
            except (*LOST, pymysql.err.MySQLError, TimeoutError) as exc:
                await self._pool.discard(conn)
                if fresh:
                    raise unavailable("the database server stopped answering") from exc
                continue
            return conn
        raise unavailable("the database server stopped answering")

    def _bind(self, conn: aiomysql.Connection, sql: str, args: Sequence[Scalar]) -> str:
        s = scan(sql, "mysql")
        if len(s.positions) != len(args):
            raise CallError(
                ErrorCode.REFUSED,
                f"the SQL has {len(s.positions)} ? placeholder(s) for {len(args)} argument(s)",
            )
        return interpolate(sql, s.positions, [conn.literal(a) for a in args])

    async def read(self, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        problem = read_problem(sql, "mysql")
        if problem is not None:
            raise CallError(ErrorCode.REFUSED, f"Helm refused this read query: {problem}")
        conn = await self._begin("READ ONLY")
        return await self._guarded(conn, self._fetch(conn, self._bind(conn, sql, args)))

    async def write(self, sql: str, args: Sequence[Scalar]) -> Written:
        s = scan(sql, "mysql")
        if s.first_words[:1] == ("LOAD",) and "LOCAL" in s.words:
            raise CallError(ErrorCode.REFUSED, LOCAL_FILE_REFUSED)
        conn = await self._begin("READ WRITE")
        count: int = await self._guarded(conn, self._modify(conn, self._bind(conn, sql, args)))
        return Written(count)

    async def _guarded[T](self, conn: aiomysql.Connection, work: Any) -> T:
        """Run ``work`` on ``conn`` within the time limit; give the connection back or drop it."""
        try:
            async with asyncio.timeout(QUERY_SECONDS):
                result: T = await work
        except TimeoutError as exc:
            await self._kill(conn)
            await self._pool.discard(conn)
            raise timeout_error() from exc
        except CallError as err:
            # A cut-off result is still streaming, a refused file request leaves the protocol
            # mid-exchange: dropping the link ends both on the server.
            if err.code is ErrorCode.QUERY_FAILED:
                await self._pool.give(conn)
            else:
                await self._pool.discard(conn)
            raise
        except BaseException:
            await self._pool.discard(conn)
            raise
        await self._pool.give(conn)
        return result

    async def _fetch(self, conn: aiomysql.Connection, sql: str) -> dict[str, Any]:
        try:
            cursor = await conn.cursor(aiomysql.SSCursor)
            await cursor.execute(sql)
            desc = cursor.description or ()
            budget = RowBudget(
                [d[0] for d in desc], [bigint if d[1] == FIELD_TYPE.LONGLONG else plain for d in desc]
            )
            while not budget.full:
                chunk = await cursor.fetchmany(FETCH_CHUNK)
                budget.add_all(chunk)
                if len(chunk) < FETCH_CHUNK:  # the last chunk: the result is complete
                    await cursor.close()
                    return budget.result()
            budget.add_all(await cursor.fetchmany(FETCH_ROWS - len(budget.rows)))
            await cursor.close()
            return budget.result()
        except pymysql.err.MySQLError as exc:
            raise self._error(exc) from exc
        except LOST as exc:
            raise unavailable("the database server stopped answering") from exc
        except RuntimeError as exc:  # the driver refusing the server's request for a local file
            raise CallError(ErrorCode.REFUSED, LOCAL_FILE_REFUSED) from exc

    async def _modify(self, conn: aiomysql.Connection, sql: str) -> int:
        try:
            cursor = await conn.cursor()
            await cursor.execute(sql)
            count = max(int(cursor.rowcount), 0)
            await cursor.close()
            await _query(conn, "COMMIT")
            return count
        except pymysql.err.MySQLError as exc:
            raise self._error(exc) from exc
        except LOST as exc:
            raise unavailable("the database server stopped answering") from exc
        except RuntimeError as exc:  # the driver refusing the server's request for a local file
            raise CallError(ErrorCode.REFUSED, LOCAL_FILE_REFUSED) from exc

    def _error(self, exc: pymysql.err.MySQLError) -> CallError:
        code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
        if code in INTERRUPTED:
            return timeout_error()
        if code in CLIENT_ERRORS:
            return unavailable("the database server stopped answering")
        message = str(exc.args[1]) if len(exc.args) > 1 else ""
        return query_failed(message, self._secrets)

    async def role_warnings(self) -> list[str]:
        """What the profile's user may do beyond reading (for Settings and ``helm db add``)."""
        conn = await self._begin("READ ONLY")
        rows: dict[str, Any] = await self._guarded(conn, self._fetch(conn, PRIVILEGES_SQL))
        granted = {str(r[0]).upper() for r in rows["rows"]}
        warnings = []
        if granted & ADMIN_PRIVILEGES:
            warnings.append(
                f"the user has administrative privileges ({', '.join(sorted(granted & ADMIN_PRIVILEGES))}): "
                "use a user that can only SELECT"
            )
        if granted & WRITE_PRIVILEGES:
            warnings.append(
                "the user can write (" + ", ".join(sorted(granted & WRITE_PRIVILEGES)) + "): Helm keeps "
                "reads read-only, but stored functions can have side effects; a read-only user is safer"
            )
        return warnings

    async def _kill(self, conn: aiomysql.Connection) -> None:
        """Stop the running statement on the server (the client side alone would leave it running)."""
        try:
            killer = await self._connect()
        except CallError:
            return
        try:
            await asyncio.wait_for(_query(killer, f"KILL QUERY {int(conn.thread_id())}"), CONNECT_SECONDS)
        except (*LOST, pymysql.err.MySQLError, TimeoutError):
            pass
        finally:
            killer.close()

    async def aclose(self) -> None:
        await self._pool.aclose()


async def _query(conn: aiomysql.Connection, sql: str) -> None:
    """One statement Helm wrote itself, with no result set."""
    cursor = await conn.cursor()
    await cursor.execute(sql)
    await cursor.close()


async def _reset(conn: aiomysql.Connection) -> None:
    # COM_RESET_CONNECTION has no aiomysql method; the packet is the command byte alone.
    await conn._execute_command(COM_RESET_CONNECTION, b"")
    await conn._read_ok_packet()
    await _query(conn, READ_ONLY_SESSION)


async def _close(conn: aiomysql.Connection) -> None:
    conn.close()
