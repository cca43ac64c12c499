"""The DB explorer's logic: ad-hoc SQL on the user's own database profiles (no Qt here).

The explorer window (``ui/db_explorer.py``) is a thin view over ``DbExplorer``; every method
is plain asyncio and every answer is data:

    explorer = DbExplorer(broker)            # one per Helm run; build it in app/
    explorer.profiles()                      # -> [ExplorerProfile(name, engine, where, writes_enabled)]
    await explorer.query("local", "SELECT …")
        # -> {"ok": True, "data": {"columns": [...], "rows": [[...]]}, "error": None}
        #    or {"ok": False, "data": None, "error": {"code": ..., "message": ...}}
        # Read-only, one statement, the same limits and error codes as extension queries
        # (5 s, 1000 rows, 1 MiB; refused, not_configured, query_failed, timeout, unavailable,
        # too_many_rows, too_large). Never raises for a database problem.

    # The write toggle, per profile. Turning it on is itself confirmed:
    decision = await explorer.enable_writes("local", confirm)   # confirm: broker.Confirmer
    explorer.writes_enabled("local")         # True until disable_writes, a change of the
    explorer.disable_writes("local")         # profile in Settings, or Helm restarts

    # Each write statement is still confirmed, with a token bound to the profile and exact SQL:
    await explorer.request_write("local", "UPDATE …", confirm)   # -> {ok, data: {rowsAffected}, error}
    # or in two steps, when the dialog is driven elsewhere:
    summary = await explorer.describe_write("local", "UPDATE …")  # WriteSummary (raises CallError)
    await explorer.write("local", "UPDATE …", summary.token)      # the Confirm button only

The toggle and every statement go through the broker's one write pipeline
(``Broker.writes``, see ``broker.writes``): the same tokens, dialog answer and audit log as an
extension's writes, asked by Helm itself (``broker.context.HelmItself``, id
``helm.db-explorer``), never posing as an extension. The database is reached through
``Broker.database()``, the typed ``db`` kind. ``confirm`` receives a ``broker.WriteSummary`` and
answers with a ``broker.Decision``; show every string in it as plain text. Writes refused while
the toggle is off return ``refused`` (also when it is turned off while the dialog is open); a
declined write returns ``declined``; a missing, used, expired or mismatched token, or a profile
changed while the dialog was open, returns ``confirmation_required``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from broker import envelope
from broker.context import HelmItself
from broker.errors import CallError, ErrorCode
from broker.kinds.base import WriteDetails
from broker.kinds.db import DB
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.sqlscan import scan
from broker.summary import Confirmer, Decision, WriteSummary
from broker.writes import Prepared, WriteTarget

if TYPE_CHECKING:
    from broker.broker import Broker

EXPLORER_ID = "helm.db-explorer"
EXPLORER_NAME = "DB explorer"
EXPLORER = HelmItself(EXPLORER_ID, EXPLORER_NAME)
"""The explorer's requester: Helm itself, in no workspace (``broker.context``)."""
ENABLE_TITLE = "Allow database writes"
MAX_SQL = 65536


@dataclass(frozen=True)
class ExplorerProfile:
    name: str
    engine: str
    where: str
    """Path, or user@host:port/database: for the user's own eyes in the explorer."""
    writes_enabled: bool


class DbExplorer:
    """Ad-hoc SQL against database profiles; see the module docstring for the whole API."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self._writable: dict[str, str] = {}  # profile name -> fingerprint when writes were enabled

    # -- profiles and the toggle ---------------------------------------------------------
    def profiles(self) -> list[ExplorerProfile]:
        return [
            ExplorerProfile(p.name, p.engine, p.where, self._enabled(p))
            for p in self._broker.database().profiles.all()
        ]

    def writes_enabled(self, profile: str) -> bool:
        try:
            return self._enabled(self._broker.database().profile(profile))
        except CallError:
            return False

    def _enabled(self, p: DbProfile) -> bool:
        return self._writable.get(p.name) == p.fingerprint

    def disable_writes(self, profile: str) -> None:
        self._writable.pop(profile, None)

    async def enable_writes(self, profile: str, confirm: Confirmer) -> Decision:
        """Ask the user to turn writes on for ``profile``; on until restart, change or off."""
        answers: list[Decision] = []

        async def asked(summary: WriteSummary) -> Decision:
            answers.append(await confirm(summary))
            return answers[-1]

        try:
            await self._broker.writes.request(self._toggle(profile), asked)
        except CallError:
            if not answers:
                raise  # nothing was asked: the profile is gone or invalid
            # Confirmed, but the token no longer held (the profile changed): not turned on.
            return Decision.DECLINED if answers[-1] is Decision.CONFIRMED else answers[-1]
        return Decision.CONFIRMED

    def _toggle(self, name: str) -> WriteTarget:
        async def prepare() -> Prepared:
            p = self._broker.database().profile(name)
            details = WriteDetails(
                title=ENABLE_TITLE,
                fields=(("Connection", p.name), ("Database", p.where)),
                request=(
                    f"Turn on writes in the DB explorer for database {p.name} ({p.engine}: {p.where}).\n"
                    "Each write statement will still ask for your confirmation."
                ),
                binding={"enable": p.name, "profile": p.fingerprint},
            )

            async def send() -> dict[str, Any]:
                self._writable[p.name] = p.fingerprint
                return envelope.success("db", {"writes": True})

            return Prepared(details, send)

        return WriteTarget(EXPLORER, name, "enable writes", "db", prepare)

    # -- reads ---------------------------------------------------------------------------
    async def query(self, profile: str, sql: str) -> dict[str, Any]:
        """Run one read-only statement; the envelope, never an exception for a DB problem."""
        try:
            p = self._checked(profile, sql)
            return await self._broker.database().run(p, sql, [], write=False)
        except CallError as err:
            return envelope.failure("db", err)

    # -- writes --------------------------------------------------------------------------
    async def describe_write(self, profile: str, sql: str) -> WriteSummary:
        """The confirmation for one write statement, with its one-time token (5 minutes)."""
        return await self._broker.writes.describe(self._statement(profile, sql))

    async def write(self, profile: str, sql: str, token: str | None) -> dict[str, Any]:
        """Run a confirmed write; ``token`` must come from ``describe_write`` for this exact SQL."""
        try:
            return await self._broker.writes.send(self._statement(profile, sql), token)
        except CallError as err:
            return envelope.failure("db", err, write=True)

    async def request_write(self, profile: str, sql: str, confirm: Confirmer) -> dict[str, Any]:
        """Describe, ask ``confirm``, and run the write only when the user confirmed."""
        try:
            return await self._broker.writes.request(self._statement(profile, sql), confirm)
        except CallError as err:
            return envelope.failure("db", err, write=True)

    def _statement(self, name: str, sql: str) -> WriteTarget:
        async def prepare() -> Prepared:
            p = self._checked(name, sql)
            if not self._enabled(p):
                raise CallError(
                    ErrorCode.REFUSED, f"writes are off for database {p.name}; turn them on first"
                )
            details = DB.confirm.details(
                fields=(
                    ("Query", "ad-hoc SQL"),
                    ("Connection", f"{p.name} ({p.engine}: {p.where})"),
                    ("SQL", sql),
                    ("Args", "[]"),
                ),
                request=sql,
                binding={"profile": p.name, "fingerprint": p.fingerprint, "sql": sql},
            )

            async def send() -> dict[str, Any]:
                if not self._enabled(p):  # turned off while the dialog was open
                    raise CallError(
                        ErrorCode.REFUSED, f"writes are off for database {p.name}; nothing was sent"
                    )
                return await self._broker.database().run(p, sql, [], write=True)

            return Prepared(details, send)

        return WriteTarget(EXPLORER, name, "write", "db", prepare)

    # -- helpers -------------------------------------------------------------------------
    def _checked(self, profile: str, sql: str) -> DbProfile:
        p = self._broker.database().profile(profile)
        if not sql.strip():
            raise CallError(ErrorCode.REFUSED, "there is no SQL to run")
        if len(sql) > MAX_SQL:
            raise CallError(ErrorCode.REFUSED, "the SQL is longer than 64 KiB")
        s = scan(sql, p.engine)
        if s.unterminated:
            raise CallError(ErrorCode.REFUSED, "the SQL has an unterminated string, identifier or comment")
        if s.statements != 1:
            raise CallError(ErrorCode.REFUSED, f"run one statement at a time (found {s.statements})")
        return p
