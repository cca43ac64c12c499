"""The DB explorer's logic: run SQL on a profile read-only, and the contract's write toggle.

Reads run in the engine's read-only mode, so the database itself refuses a write. Writes need
the toggle for that connection, which the user confirms when turning it on; it stays on until
Helm restarts, the profile changes (its fingerprint) or the user turns it off. Even then every
write statement is described, confirmed in Helm's dialog and sent with a one-time token bound
to the profile and the exact SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from broker.broker import Broker
from broker.errors import CallError, ErrorCode, HelmError
from broker.jsonutil import digest
from broker.kinds.db import profiles as db_profiles
from broker.summary import Confirmer, Decision, WriteSummary
from broker.tokens import Binding, Redemption

EXPLORER = "helm.db-explorer"
"""The extension id the explorer's writes are confirmed and audited under."""


@dataclass(frozen=True)
class DbChoice:
    name: str
    engine: str
    where: str


class ExplorerBackend(Protocol):
    def profiles(self) -> list[DbChoice]: ...

    def fingerprint(self, name: str) -> str | None:
        """Changes whenever the profile changes; None when there is no such profile."""
        ...

    async def read(self, name: str, sql: str) -> dict[str, Any]: ...

    async def describe_write(self, name: str, sql: str) -> WriteSummary: ...

    async def write(self, name: str, sql: str, token: str) -> dict[str, Any]: ...


def _failure(code: ErrorCode, message: str) -> dict[str, Any]:
    return {"ok": False, "data": None, "error": {"code": code.value, "message": message}}


class BrokerExplorer:
    """``ExplorerBackend`` on the broker's db kind, with tokens from the broker's token book."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def profiles(self) -> list[DbChoice]:
        return [DbChoice(p.name, p.engine, p.where) for p in db_profiles.all_profiles(self.broker.home)]

    def fingerprint(self, name: str) -> str | None:
        try:
            profile = db_profiles.load(self.broker.home, name)
        except HelmError:
            return None
        return None if profile is None else profile.fingerprint

    def _binding(self, name: str, sql: str) -> Binding:
        request = digest({"profile": self.fingerprint(name), "sql": sql})
        return Binding("", EXPLORER, name, "sql", request)

    async def read(self, name: str, sql: str) -> dict[str, Any]:
        return await self._run(name, sql, write=False)

    async def describe_write(self, name: str, sql: str) -> WriteSummary:
        adapter: Any = self.broker.adapter("db")
        profile = adapter.profile(name)
        binding = self._binding(name, sql)
        token, ttl = self.broker.tokens.mint(binding)
        return WriteSummary(
            token=token,
            expires_in=ttl,
            kind="db",
            title="Confirm database write",
            workspace="(none)",
            extension=EXPLORER,
            extension_name="DB explorer",
            connection=name,
            operation="sql",
            fields=(("Query", "typed in the DB explorer"), ("Connection", f"{name} ({profile.where})")),
            request=sql,
            request_digest=binding.request_digest,
        )

    async def write(self, name: str, sql: str, token: str) -> dict[str, Any]:
        verdict = self.broker.tokens.redeem(token, self._binding(name, sql))
        if verdict is not Redemption.VALID:
            return _failure(ErrorCode.CONFIRMATION_REQUIRED, "the confirmation is not valid; nothing ran")
        return await self._run(name, sql, write=True)

    async def _run(self, name: str, sql: str, *, write: bool) -> dict[str, Any]:
        try:
            adapter: Any = self.broker.adapter("db")
            profile = adapter.profile(name)
            result: dict[str, Any] = await adapter.run(profile, sql, [], write=write)
        except CallError as err:
            return _failure(err.code, err.message)
        return result


class ExplorerSession:
    """The explorer's state for one window: which connections have writes turned on."""

    def __init__(self, backend: ExplorerBackend, confirm: Confirmer) -> None:
        self.backend = backend
        self.confirm = confirm
        self._writes_on: dict[str, str] = {}  # profile name -> fingerprint when turned on

    def writes_on(self, name: str) -> bool:
        fingerprint = self._writes_on.get(name)
        if fingerprint is None:
            return False
        if fingerprint != self.backend.fingerprint(name):
            del self._writes_on[name]  # the profile changed: the toggle goes off
            return False
        return True

    def turn_on(self, name: str) -> bool:
        fingerprint = self.backend.fingerprint(name)
        if fingerprint is None:
            return False
        self._writes_on[name] = fingerprint
        return True

    def turn_off(self, name: str) -> None:
        self._writes_on.pop(name, None)

    async def run(self, name: str, sql: str) -> dict[str, Any]:
        """Run ``sql``: read-only, or — with writes on — as a confirmed write."""
        if not self.writes_on(name):
            return await self.backend.read(name, sql)
        try:
            summary = await self.backend.describe_write(name, sql)
        except CallError as err:
            return _failure(err.code, err.message)
        decision = await self.confirm(summary)
        if decision is Decision.DECLINED:
            return _failure(ErrorCode.DECLINED, "you declined this write; nothing ran")
        if decision is Decision.EXPIRED:
            return _failure(ErrorCode.CONFIRMATION_REQUIRED, "the confirmation expired; nothing ran")
        return await self.backend.write(name, sql, summary.token)
