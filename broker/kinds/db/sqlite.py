"""SQLite: read-only connections guarded by an authorizer, each with a worker thread of its own.

Reads use a pooled connection opened with the URI ``mode=ro`` and ``PRAGMA query_only``. Both
stop writes to the file, but a read-only connection can still change things: ATTACH another
file, ``VACUUM INTO`` a new file (SQLite authorizes it as an ATTACH), create temporary tables,
views or triggers that later queries would see, change settings with PRAGMA, load an extension.
SQLite's authorizer sees every action of a statement as it is prepared, so Helm allows only
what a read needs (``READ``, ``SELECT``, functions, recursive CTEs, reading PRAGMAs) and denies
the rest. A write opens the file read-write for that one statement with the same refusals
(ATTACH, PRAGMA changes, transactions, extensions) and closes it again.

sqlite3 blocks, so each connection lives on a worker thread of its own, and a whole read —
run the statement, take the rows within the limits, close the cursor — is one trip to that
thread. On timeout SQLite is interrupted from the event loop (``interrupt`` may be called from
any thread) and the connection is closed once its thread is free.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from broker.errors import CallError, ErrorCode
from broker.kinds.db.engine import (
    QUERY_SECONDS,
    Pool,
    Written,
    query_failed,
    timeout_error,
    unavailable,
)
from broker.kinds.db.values import FETCH_ROWS, RowBudget, Scalar, plain

# PRAGMAs that only report, with or without an argument naming a table or index.
READ_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
     "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check", "function_list",
     "pragma_list", "collation_list", "module_list", "compile_options"}
)  # fmt: skip
# PRAGMAs that report a setting when given no value (with a value they would change it).
SETTING_PRAGMAS = frozenset(
    {"user_version", "application_id", "schema_version", "page_count", "page_size",
     "freelist_count", "encoding", "foreign_keys", "data_version", "journal_mode", "auto_vacuum"}
)  # fmt: skip
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})
READ_ACTIONS = frozenset({sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE})
# Always refused, for reads and writes: other files, transaction control (each call is one
# statement that SQLite runs atomically).
ALWAYS_DENIED = frozenset(
    {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT}
)
FETCH_CHUNK = 200


def _pragma_allowed(name: str | None, arg: str | None) -> bool:
    name = (name or "").lower()
    return name in READ_PRAGMAS or (name in SETTING_PRAGMAS and arg is None)


Authorizer = Callable[[int, str | None, str | None, str | None, str | None], int]


def read_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
) -> int:
    if action in READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and _pragma_allowed(arg1, arg2):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def write_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None
) -> int:
    if action in ALWAYS_DENIED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_PRAGMA:
        return sqlite3.SQLITE_OK if _pragma_allowed(arg1, arg2) else sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class _Connection:
    """A sqlite3 connection and the one thread that uses it.

    A job is handed over on a queue and its result comes back with ``call_soon_threadsafe``:
    one wake-up each way, about half of what an executor's futures cost per trip.
    """

    def __init__(self) -> None:
        self.db: sqlite3.Connection | None = None
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        threading.Thread(target=_work, args=(self._jobs,), name="helm-sqlite", daemon=True).start()
        # Forgotten without close (a loop torn down mid-call): the thread still ends.
        self._ending = weakref.finalize(self, self._jobs.put, None)

    async def run[T](self, fn: Callable[[], T], seconds: float | None = None) -> T:
        """``fn()`` on the connection's thread; TimeoutError when it takes more than ``seconds``
        (the job itself goes on until the caller interrupts it). One timer, not a cancel scope:
        the wait ends with the deadline, and the caller's task is never cancelled for it."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()
        self._jobs.put((fn, done, loop))
        if seconds is None:
            return await done
        timer = loop.call_later(seconds, _expire, done)
        try:
            return await done
        finally:
            timer.cancel()

    def interrupt(self) -> None:
        if self.db is not None:
            self.db.interrupt()

    async def close(self) -> None:
        db, self.db = self.db, None
        if db is not None:
            # Queued behind whatever the thread still runs (an interrupted statement).
            await self.run(db.close)
        self._ending()


_Job = tuple[Callable[[], Any], "asyncio.Future[Any]", asyncio.AbstractEventLoop]


def _work(jobs: queue.SimpleQueue[_Job | None]) -> None:
    """The connection's thread: run each job in turn and hand its outcome to its loop."""
    while (job := jobs.get()) is not None:
        fn, done, loop = job
        try:
            result = fn()
        except BaseException as exc:  # noqa: BLE001 - every outcome goes back to the caller
            _hand_back(loop, _set_exception, done, exc)
        else:
            _hand_back(loop, _set_result, done, result)
        del job, fn, done  # nothing of the job outlives it while the thread waits


def _hand_back(loop: asyncio.AbstractEventLoop, set_: Callable[..., None], *args: Any) -> None:
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
        loop.call_soon_threadsafe(set_, *args)


def _set_result(done: asyncio.Future[Any], result: Any) -> None:
    if not done.done():  # the caller may have given up (a timeout, a closing frame)
        done.set_result(result)


def _set_exception(done: asyncio.Future[Any], exc: BaseException) -> None:
    if not done.done():
        done.set_exception(exc)


def _expire(done: asyncio.Future[Any]) -> None:
    _set_exception(done, TimeoutError())


class SqliteEngine:
    def __init__(self, path: str) -> None:
        self._path = path
        self._secrets = (path, Path(path).name)
        self._pool: Pool[_Connection] = Pool(self._open_read, _close)

    def _uri(self, mode: str) -> str:
        return f"{Path(self._path).as_uri()}?mode={mode}"

    async def _connect(self, mode: str, authorizer: Authorizer) -> _Connection:
        conn = _Connection()

        def open_() -> None:
            db = sqlite3.connect(
                self._uri(mode), uri=True, isolation_level=None, timeout=2.0, check_same_thread=False
            )
            try:
                if mode == "ro":
                    db.execute("PRAGMA query_only = 1")  # before the authorizer, which refuses it
                db.set_authorizer(authorizer)
            except BaseException:
                db.close()
                raise
            conn.db = db

        try:
            await conn.run(open_)
        except sqlite3.Error as exc:
            await conn.close()
            raise unavailable("the database file cannot be opened") from exc
        return conn

    async def _open_read(self) -> _Connection:
        return await self._connect("ro", read_authorizer)

    async def read(self, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        conn, _fresh = await self._pool.take()
        try:
            result = await conn.run(lambda: self._fetch(conn, sql, args), QUERY_SECONDS)
        except TimeoutError as exc:
            conn.interrupt()
            await self._pool.discard(conn)
            raise timeout_error() from exc
        except CallError:
            await self._pool.give(conn)  # the cursor is closed: nothing of the statement remains
            raise
        except BaseException:
            await self._pool.discard(conn)
            raise
        await self._pool.give(conn)
        return result

    def _fetch(self, conn: _Connection, sql: str, args: Sequence[Scalar]) -> dict[str, Any]:
        """On the connection's thread: the statement's rows within the limits."""
        assert conn.db is not None
        try:
            cursor = conn.db.execute(sql, list(args))
            try:
                columns = [d[0] for d in cursor.description or ()]
                budget = RowBudget(columns, [plain] * len(columns))
                while not budget.full:
                    chunk = cursor.fetchmany(FETCH_CHUNK)
                    budget.add_all(chunk)
                    if len(chunk) < FETCH_CHUNK:  # the last chunk: no need to ask again
                        return budget.result()
                budget.add_all(cursor.fetchmany(FETCH_ROWS - len(budget.rows)))
                return budget.result()
            finally:
                cursor.close()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    async def write(self, sql: str, args: Sequence[Scalar]) -> Written:
        conn = await self._connect("rw", write_authorizer)
        try:
            count = await conn.run(lambda: self._modify(conn, sql, args), QUERY_SECONDS)
        except TimeoutError as exc:
            conn.interrupt()
            raise timeout_error() from exc
        finally:
            await conn.close()
        return Written(max(count, 0))

    def _modify(self, conn: _Connection, sql: str, args: Sequence[Scalar]) -> int:
        assert conn.db is not None
        try:
            cursor = conn.db.execute(sql, list(args))
            count = cursor.rowcount
            cursor.close()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        return count

    def _error(self, exc: sqlite3.Error) -> CallError:
        message = str(exc.args[0]) if exc.args else ""
        if isinstance(exc, sqlite3.OperationalError) and "interrupted" in message:
            return timeout_error()
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_AUTH or "not authorized" in message:
            return CallError(
                ErrorCode.REFUSED,
                "Helm refused this statement: on SQLite it may only read (no ATTACH, PRAGMA changes, "
                "temporary objects, transactions or extensions)",
            )
        return query_failed(message, self._secrets)

    async def role_warnings(self) -> list[str]:
        # SQLite has no accounts: reads are read-only by how Helm opens the file.
        return []

    async def aclose(self) -> None:
        await self._pool.aclose()


async def _close(conn: _Connection) -> None:
    await conn.close()
