"""The DB explorer's logic: ad-hoc SQL on the user's own database profiles (no Qt here).

The explorer window (in ``ui/``) is a thin view over ``DbExplorer``; every method is plain
asyncio and every answer is data:

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

``confirm`` receives a ``broker.WriteSummary`` (title, fields, request) and answers with a
``broker.Decision``; show every string in it as plain text. Writes refused while the toggle
is off return ``refused``; a declined write returns ``declined``; a missing, used, expired or
mismatched token returns ``confirmation_required``. Each decision goes to the audit log under
the extension id ``helm.db-explorer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from broker import envelope
from broker.audit import AuditRecord
from broker.broker import Broker
from broker.errors import CallError, ErrorCode
from broker.jsonutil import digest
from broker.kinds.db import profiles
from broker.kinds.db.adapter import TITLE, DbKind
from broker.kinds.db.profiles import DbProfile
from broker.kinds.db.sqlscan import scan
from broker.summary import Confirmer, Decision, WriteSummary
from broker.tokens import Binding, Redemption

EXPLORER_ID = "helm.db-explorer"
EXPLORER_NAME = "DB explorer"
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
            for p in profiles.all_profiles(self._broker.home)
        ]

    def writes_enabled(self, profile: str) -> bool:
        try:
            return self._enabled(self._kind().profile(profile))
        except CallError:
            return False

    def _enabled(self, p: DbProfile) -> bool:
        return self._writable.get(p.name) == p.fingerprint

    def disable_writes(self, profile: str) -> None:
        self._writable.pop(profile, None)

    async def enable_writes(self, profile: str, confirm: Confirmer) -> Decision:
        """Ask the user to turn writes on for ``profile``; on until restart, change or off."""
        p = self._kind().profile(profile)
        request = (
            f"Turn on writes in the DB explorer for database {p.name} ({p.engine}: {p.where}).\n"
            "Each write statement will still ask for your confirmation."
        )
        bound = digest({"enable": p.name, "profile": p.fingerprint})
        binding = Binding("", EXPLORER_ID, p.name, "enable writes", bound)
        token, ttl = self._broker.tokens.mint(binding)
        summary = WriteSummary(
            token=token, expires_in=ttl, kind="db", title=ENABLE_TITLE, workspace="",
            extension=EXPLORER_ID, extension_name=EXPLORER_NAME, connection=p.name,
            operation="enable writes", fields=(("Connection", p.name), ("Database", p.where)),
            request=request, request_digest=bound,
        )  # fmt: skip
        decision = await confirm(summary)
        if decision is Decision.CONFIRMED and self._broker.tokens.redeem(token, binding) is Redemption.VALID:
            self._writable[p.name] = p.fingerprint
        else:
            self._broker.tokens.discard(token)
            decision = Decision.DECLINED if decision is Decision.CONFIRMED else decision
        self._audit(p.name, "enable writes", decision.value, ENABLE_TITLE, bound, "toggle")
        return decision

    # -- reads ---------------------------------------------------------------------------
    async def query(self, profile: str, sql: str) -> dict[str, Any]:
        """Run one read-only statement; the envelope, never an exception for a DB problem."""
        try:
            p = self._checked(profile, sql)
            return await self._kind().run(p, sql, [], write=False)
        except CallError as err:
            return envelope.failure("db", err)

    # -- writes --------------------------------------------------------------------------
    async def describe_write(self, profile: str, sql: str) -> WriteSummary:
        """The confirmation for one write statement, with its one-time token (5 minutes)."""
        p = self._checked(profile, sql)
        if not self._enabled(p):
            raise CallError(ErrorCode.REFUSED, f"writes are off for database {p.name}; turn them on first")
        bound = self._write_digest(p, sql)
        token, ttl = self._broker.tokens.mint(Binding("", EXPLORER_ID, p.name, "write", bound))
        return WriteSummary(
            token=token, expires_in=ttl, kind="db", title=TITLE, workspace="", extension=EXPLORER_ID,
            extension_name=EXPLORER_NAME, connection=p.name, operation="write",
            fields=(("Query", "ad-hoc SQL"), ("Connection", f"{p.name} ({p.engine}: {p.where})"),
                    ("SQL", sql), ("Args", "[]")),
            request=sql, request_digest=bound,
        )  # fmt: skip

    async def write(self, profile: str, sql: str, token: str | None) -> dict[str, Any]:
        """Run a confirmed write; ``token`` must come from ``describe_write`` for this exact SQL."""
        try:
            p = self._checked(profile, sql)
            bound = self._write_digest(p, sql)
            if not self._enabled(p):
                raise CallError(ErrorCode.REFUSED, f"writes are off for database {p.name}; nothing was sent")
            if token is None:
                raise CallError(
                    ErrorCode.CONFIRMATION_REQUIRED, "a write needs your confirmation; nothing was sent"
                )
            verdict = self._broker.tokens.redeem(token, Binding("", EXPLORER_ID, p.name, "write", bound))
            if verdict is not Redemption.VALID:
                self._audit(p.name, "write", "refused", TITLE, bound, "nothing sent")
                raise CallError(
                    ErrorCode.CONFIRMATION_REQUIRED,
                    "the confirmation is missing, used, expired or for other SQL; nothing was sent",
                )
            try:
                result = await self._kind().run(p, sql, [], write=True)
            except CallError as err:
                self._audit(p.name, "write", "confirmed", TITLE, bound, err.code.value)
                raise
            self._audit(p.name, "write", "confirmed", TITLE, bound, "ok")
            return result
        except CallError as err:
            return envelope.failure("db", err, write=True)

    async def request_write(self, profile: str, sql: str, confirm: Confirmer) -> dict[str, Any]:
        """Describe, ask ``confirm``, and run the write only when the user confirmed."""
        try:
            summary = await self.describe_write(profile, sql)
        except CallError as err:
            return envelope.failure("db", err, write=True)
        decision = await confirm(summary)
        if decision is Decision.CONFIRMED:
            return await self.write(profile, sql, summary.token)
        self._broker.tokens.discard(summary.token)
        self._audit(profile, "write", decision.value, TITLE, summary.request_digest, "nothing sent")
        if decision is Decision.DECLINED:
            answer = CallError(ErrorCode.DECLINED, "you declined this write; nothing was sent")
        else:
            answer = CallError(ErrorCode.CONFIRMATION_REQUIRED, "the confirmation expired; nothing was sent")
        return envelope.failure("db", answer, write=True)

    # -- helpers -------------------------------------------------------------------------
    def _kind(self) -> DbKind:
        kind = self._broker.adapter("db")
        assert isinstance(kind, DbKind)
        return kind

    def _checked(self, profile: str, sql: str) -> DbProfile:
        p = self._kind().profile(profile)
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

    @staticmethod
    def _write_digest(p: DbProfile, sql: str) -> str:
        return digest({"profile": p.name, "fingerprint": p.fingerprint, "sql": sql})

    def _audit(
        self, profile: str, operation: str, decision: str, title: str, bound: str, outcome: str
    ) -> None:
        self._broker.audit.record(
            AuditRecord(
                workspace="", extension=EXPLORER_ID, connection=profile, kind="db", operation=operation,
                decision=decision, outcome=outcome, title=title, request_digest=bound,
            )
        )  # fmt: skip
