"""MySQL and MariaDB: a read-only session, one statement per call, arguments never SQL.

* aiomysql signs in (``aiomysql_private``) without offering multiple statements or local files:
  ``SELECT 1; DELETE …`` is a syntax error on the server, and the server cannot ask for a file.
* Arguments are bound by the server: a statement with arguments is a server-side prepared
  statement executed with typed binary values (``mywire``), so no argument is ever read as
  SQL. A statement without arguments is sent as it is (it has nothing to bind).
* The session is read-only (``SET SESSION tx_read_only = 1``) and each read runs in
  ``START TRANSACTION READ ONLY``. MySQL still lets such a transaction write temporary tables,
  and ``SELECT … INTO OUTFILE`` write a server file, so reads must also pass
  ``rules.read_problem``, whose scan lexes SQL as the server does. The session's sql_mode is the
  server's without ANSI_QUOTES and NO_BACKSLASH_ESCAPES, the lexing that scan assumes.
* Each call ends with COM_RESET_CONNECTION (user variables, temporary tables, prepared
  statements, locks and the open transaction all go), then makes the session read-only again.
  These commands ride in the same write as the statement: a read is one round trip
  (two on MySQL, where execute cannot follow its prepare unanswered).
* On timeout Helm sends ``KILL QUERY`` from a second connection and drops the first.
* Dates and times are the server's text (``mytypes``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiomysql
import pymysql  # type: ignore[import-untyped]
from pymysql.constants import CLIENT  # type: ignore[import-untyped]

from broker.errors import CallError, ErrorCode
from broker.kinds.db import mywire
from broker.kinds.db.aiomysql_private import sign_in
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
from broker.kinds.db.mywire import LOCAL_FILE_REFUSED, Ok, PreparedStatement, ServerError, Step, Wire, query
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.rules import read_problem
from broker.kinds.db.sqlscan import scan
from broker.kinds.db.values import Scalar

ACCESS_DENIED = frozenset({1044, 1045, 1698})
UNKNOWN_DATABASE = 1049
INTERRUPTED = frozenset({1317, 1969, 3024})  # query interrupted / statement or execution time exceeded
LOST = (OSError, asyncio.IncompleteReadError, mywire.ProtocolError)
BEGIN_READ = query("START TRANSACTION READ ONLY")
BEGIN_WRITE = query("START TRANSACTION READ WRITE")
COMMIT = query("COMMIT")
# sql_mode flags that change how the server splits SQL into tokens (directly, or as part of a
# combination mode): Helm's scan assumes neither.
LEXER_MODES = frozenset(
    {"ANSI_QUOTES", "NO_BACKSLASH_ESCAPES", "ANSI", "DB2", "MAXDB", "MSSQL", "ORACLE", "POSTGRESQL"}
)
_MODE_NAME = re.compile(r"[A-Z0-9_]+")
_MARIADB = re.compile(r"(\d+)\.(\d+)\.\d+-MariaDB")
RESET_FAILED = "Helm could not reset the database session"


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


def session_settings(server_mode: str, server_version: str) -> str:
    """The statement that makes a session read-only, with the server's sql_mode minus
    ``LEXER_MODES`` (one statement: one command less in every call)."""
    kept = [m for m in server_mode.upper().split(",") if _MODE_NAME.fullmatch(m) and m not in LEXER_MODES]
    # MariaDB names the setting tx_read_only (its newer name is an alias from 11.1 on);
    # MySQL 8 knows only transaction_read_only.
    read_only = "tx_read_only" if "MariaDB" in server_version else "transaction_read_only"
    return f"SET SESSION {read_only} = 1, SESSION sql_mode = '{','.join(kept)}'"


def pipelines_execute(server_version: str) -> bool:
    """MariaDB 10.2 and later execute statement id -1: the statement prepared just before."""
    m = _MARIADB.search(server_version)
    return m is not None and (int(m.group(1)), int(m.group(2))) >= (10, 2)


@dataclass
class _MysqlSession:
    conn: aiomysql.Connection
    wire: Wire
    settings_sql: str
    pipelined: bool

    def tail(self) -> list[Step]:
        """What leaves the session clean for the next call, sent after the statement."""
        w = self.wire
        return [(mywire.reset(), w.ok), (query(self.settings_sql), w.ok)]


class _StaleMysqlConnection(Exception):
    """A pooled connection turned out dead before the server answered anything: try a new one."""


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
        self._pool: Pool[_MysqlSession] = Pool(self._open, _close)

    async def _sign_in(self) -> tuple[aiomysql.Connection, Wire]:
        conn = aiomysql.Connection(
            **self._connect_args, charset="utf8mb4", connect_timeout=CONNECT_SECONDS,
            autocommit=None, local_infile=False, program_name="helm",
        )  # fmt: skip
        # aiomysql adds MULTI_STATEMENTS to every connection; the handshake must not offer it.
        conn.client_flag &= ~(CLIENT.MULTI_STATEMENTS | CLIENT.LOCAL_FILES)
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                reader, writer = await sign_in(conn)
        except pymysql.err.OperationalError as exc:
            code = exc.args[0] if exc.args else 0
            if code in ACCESS_DENIED:
                raise unavailable(
                    "Helm could not sign in to the database (check the profile's user and password)"
                ) from exc
            if code == UNKNOWN_DATABASE:
                raise unavailable("the profile's database does not exist on the server") from exc
            raise unreachable(exc) from exc
        except (*LOST, pymysql.err.MySQLError, TimeoutError) as exc:
            conn.close()
            raise unreachable(exc) from exc
        return conn, Wire(reader, writer)

    async def _open(self) -> _MysqlSession:
        conn, wire = await self._sign_in()
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                [mode] = await wire.exchange([(query("SELECT @@SESSION.sql_mode"), _text_rows(wire))])
                if isinstance(mode, ServerError):
                    raise mode
                pipelined = pipelines_execute(conn.server_version)
                settings = session_settings(str(mode["rows"][0][0]), conn.server_version)
                session = _MysqlSession(conn, wire, settings, pipelined)
                _check_clean(await wire.exchange(session.tail()[1:]))
        except (*LOST, ServerError, CallError, TimeoutError) as exc:
            conn.close()
            raise unreachable(exc) from exc
        return session

    # -- calls ------------------------------------------------------------------------------
    async def read(self, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        problem = read_problem(sql, "mysql") or _nul_problem(sql)
        if problem is not None:
            raise CallError(ErrorCode.REFUSED, f"Helm refused this read query: {problem}")
        return await self._call(lambda s: self._read_on(s, sql, args))

    async def _read_on(self, s: _MysqlSession, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        w = s.wire
        prepared: Any = None
        if not args:
            steps = [(BEGIN_READ, w.ok), (query(sql), _text_rows(w)), *s.tail()]
            begin, result, *tail = await w.exchange(steps)
        elif s.pipelined:
            begin, prepared, result, *tail = await w.exchange([
                (BEGIN_READ, w.ok), (mywire.prepare(sql), w.prepared),
                (mywire.execute(mywire.LAST_PREPARED, args), _binary_rows(w)), *s.tail(),
            ])  # fmt: skip
        else:
            begin, prepared = await w.exchange([(BEGIN_READ, w.ok), (mywire.prepare(sql), w.prepared)])
            if not isinstance(prepared, PreparedStatement) or not isinstance(begin, Ok):
                self._settle(begin, await w.exchange(s.tail()), prepared, None, len(args))
            result, *tail = await w.exchange(
                [(mywire.execute(prepared.statement_id, args), _binary_rows(w)), *s.tail()]
            )
        self._settle(begin, tail, prepared, result, len(args))
        assert isinstance(result, dict)
        return result

    async def write(self, sql: str, args: Sequence[Scalar]) -> Written:
        s = scan(sql, "mysql")
        if s.first_words[:1] == ("LOAD",) and "LOCAL" in s.words:
            raise CallError(ErrorCode.REFUSED, LOCAL_FILE_REFUSED)
        problem = _nul_problem(sql)
        if problem is not None:
            raise CallError(ErrorCode.REFUSED, f"Helm refused this write query: {problem}")
        count = await self._call(lambda session: self._write_on(session, sql, args))
        return Written(max(count, 0))

    async def _write_on(self, s: _MysqlSession, sql: str, args: Sequence[Scalar]) -> int:
        """BEGIN (and PREPARE) first: nothing runs until the server agrees on the placeholders."""
        w = s.wire
        steps: list[Step] = [(BEGIN_WRITE, w.ok)]
        if args:
            steps.append((mywire.prepare(sql), w.prepared))
        begin, *rest = await w.exchange(steps)
        prepared = rest[0] if rest else None
        if not isinstance(begin, Ok) or (args and _mismatch(prepared, len(args))):
            self._settle(begin, await w.exchange(s.tail()), prepared, None, len(args))
        if isinstance(prepared, PreparedStatement):
            statement = mywire.execute(prepared.statement_id, args)
        else:
            statement = query(sql)
        count, commit, *tail = await w.exchange([(statement, w.affected), (COMMIT, w.ok), *s.tail()])
        self._settle(begin, tail, prepared, count, len(args))
        if isinstance(commit, ServerError):
            raise self._error(commit)
        assert isinstance(count, int)
        return count

    def _settle(self, begin: Any, tail: Sequence[Any], prepared: Any, result: Any, nargs: int) -> None:
        """Raise the error that the replies of one call explain, if any."""
        _check_clean([begin, *tail])
        for reply in (prepared, result):
            if isinstance(reply, ServerError):
                raise self._error(reply)
        if prepared is not None and _mismatch(prepared, nargs):
            raise CallError(
                ErrorCode.REFUSED,
                f"the server found {prepared.params} placeholder(s) in the SQL for {nargs} argument(s)",
            )

    async def _call[T](self, work: Callable[[_MysqlSession], Awaitable[T]]) -> T:
        """``work`` on a pooled session; a session found dead before any answer is replaced once."""
        for _attempt in range(2):
            session, fresh = await self._pool.take()
            try:
                return await self._guarded(session, work(session), retry=not fresh)
            except _StaleMysqlConnection:
                continue
        raise unavailable("the database server stopped answering")

    async def _guarded[T](self, s: _MysqlSession, work: Awaitable[T], *, retry: bool) -> T:
        """Run ``work`` on ``s`` within the time limit; give the session back or drop it."""
        replies = s.wire.replies
        try:
            async with asyncio.timeout(QUERY_SECONDS):
                result: T = await work
        except TimeoutError as exc:
            await self._kill(s)
            await self._pool.discard(s)
            raise timeout_error() from exc
        except LOST as exc:
            await self._pool.discard(s)
            if retry and s.wire.replies == replies:
                raise _StaleMysqlConnection from exc
            raise unavailable("the database server stopped answering") from exc
        except CallError as err:
            # A statement the server refused leaves the session in step and reset; anything
            # else (a cut-off result still streaming, a failed reset) ends the connection.
            await (self._pool.give(s) if err.code is ErrorCode.QUERY_FAILED else self._pool.discard(s))
            raise
        except BaseException:
            await self._pool.discard(s)
            raise
        await self._pool.give(s)
        return result

    def _error(self, exc: ServerError) -> CallError:
        if exc.code in INTERRUPTED:
            return timeout_error()
        return query_failed(exc.message, self._secrets)

    async def role_warnings(self) -> list[str]:
        """What the profile's user may do beyond reading (for Settings and ``helm db add``)."""
        rows = await self.read(PRIVILEGES_SQL, [])
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

    async def _kill(self, s: _MysqlSession) -> None:
        """Stop the running statement on the server (the client side alone would leave it running)."""
        try:
            killer, wire = await self._sign_in()
        except CallError:
            return
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                await wire.exchange([(query(f"KILL QUERY {int(s.conn.thread_id())}"), wire.ok)])
        except (*LOST, TimeoutError):
            pass
        finally:
            killer.close()

    async def aclose(self) -> None:
        await self._pool.aclose()


def _text_rows(w: Wire) -> Callable[[], Awaitable[dict[str, Any]]]:
    return lambda: w.rows(binary=False)


def _binary_rows(w: Wire) -> Callable[[], Awaitable[dict[str, Any]]]:
    return lambda: w.rows(binary=True)


def _mismatch(prepared: Any, nargs: int) -> bool:
    return not isinstance(prepared, PreparedStatement) or prepared.params != nargs


def _check_clean(replies: Sequence[Any]) -> None:
    """Helm's own commands all succeeded, and the session lexes SQL the way the scan does."""
    if not all(isinstance(r, Ok) for r in replies):
        raise unavailable(RESET_FAILED)
    if replies[-1].status & mywire.STATUS_NO_BACKSLASH_ESCAPES:
        raise unavailable(RESET_FAILED)


def _nul_problem(sql: str) -> str | None:
    return "the SQL contains a NUL character" if "\x00" in sql else None


async def _close(s: _MysqlSession) -> None:
    s.conn.close()
