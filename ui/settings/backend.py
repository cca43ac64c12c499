"""What Settings → Connections needs from the broker, as typed protocols, and the real thing.

The pages talk to these protocols only, so each page works against whatever the broker offers
today. ``BrokerConnections`` is the implementation on a running ``Broker``: profiles through
each kind's ``profiles`` module, Test through the kind's adapter. OAuth2 sign-in is a separate
``OAuthConnector``; without one, the Services page says sign-in is not available.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from broker.broker import Broker
from broker.errors import CallError, HelmError
from broker.kinds.db import profiles as db_profiles
from broker.kinds.http import profiles as http_profiles
from broker.kinds.mcp import profiles as mcp_profiles
from broker.settings import Workspace


@dataclass(frozen=True)
class TestResult:
    """The outcome of a Test button: ok, one line for the user, and details (tool names…)."""

    ok: bool
    message: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoreInfo:
    description: str
    is_keychain: bool


class ProfileSection(Protocol):
    """One tab's profiles: stored as plain JSON objects, secrets kept apart."""

    def names(self) -> list[str]: ...

    def get(self, name: str) -> dict[str, Any] | None: ...

    def has_secret(self, name: str) -> bool: ...

    def save(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        """Validate and store; a secret of ``None`` keeps the stored one. Raises HelmError."""
        ...

    def remove(self, name: str) -> None: ...

    async def test(self, name: str) -> TestResult: ...


class OAuthConnector(Protocol):
    """OAuth2 sign-in for service profiles."""

    def redirect_uri(self, name: str) -> str: ...

    def status(self, name: str) -> str:
        """Words for the user: "not connected", "connected (scopes)"…"""
        ...

    async def connect(self, name: str, progress: Callable[[str], None] | None = None) -> TestResult: ...

    async def cancel(self, name: str) -> None:
        """Stop a sign-in that is waiting for the browser."""
        ...

    async def disconnect(self, name: str) -> TestResult: ...


class ConnectionsBackend(Protocol):
    services: ProfileSection
    mcp_servers: ProfileSection
    databases: ProfileSection
    oauth: OAuthConnector | None

    def store(self) -> StoreInfo: ...


class _Section:
    def __init__(self, broker: Broker, section: str) -> None:
        self.broker = broker
        self.section = section

    def names(self) -> list[str]:
        return sorted(self.broker.home.settings().profiles(self.section))

    def get(self, name: str) -> dict[str, Any] | None:
        raw = self.broker.home.settings().profiles(self.section).get(name)
        return None if raw is None else dict(raw)

    def _secret(self, key: str, given: str | None) -> str | None:
        return self.broker.credentials.get(key) if given is None else (given or None)


class ServiceSection(_Section):
    def __init__(self, broker: Broker) -> None:
        super().__init__(broker, http_profiles.SECTION)

    def has_secret(self, name: str) -> bool:
        return any(
            self.broker.credentials.get(http_profiles.secret_key(name, s)) for s in ("token", "client_secret")
        )

    def save(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        profile = http_profiles.ServiceProfile.from_json(name, raw)
        http_profiles.save_profile(
            self.broker.home,
            self.broker.credentials,
            profile,
            token=self._secret(http_profiles.secret_key(name, "token"), secrets.get("token")),
            client_secret=self._secret(
                http_profiles.secret_key(name, "client_secret"), secrets.get("client_secret")
            ),
        )

    def remove(self, name: str) -> None:
        http_profiles.remove_profile(self.broker.home, self.broker.credentials, name)

    async def test(self, name: str) -> TestResult:
        profile = http_profiles.get_profile(self.broker.home, name)
        if profile is None:
            return TestResult(False, f"no service named {name}")
        return TestResult(True, f"{name}: {profile.base_url} ({profile.auth})")


class McpSection(_Section):
    def __init__(self, broker: Broker) -> None:
        super().__init__(broker, mcp_profiles.SECTION)

    def has_secret(self, name: str) -> bool:
        return bool(self.broker.credentials.get(mcp_profiles.token_key(name)))

    def save(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        token = self._secret(mcp_profiles.token_key(name), secrets.get("token"))
        mcp_profiles.add(self.broker.home, self.broker.credentials, name, raw, token)

    def remove(self, name: str) -> None:
        mcp_profiles.remove(self.broker.home, self.broker.credentials, name)

    async def test(self, name: str) -> TestResult:
        adapter: Any = self.broker.adapter("mcp")
        try:
            tools = await adapter.list_tools(self._workspace(), name)
        except CallError as err:
            return TestResult(False, err.message)
        names = tuple(_tool_line(t) for t in tools)
        return TestResult(True, f"connected — {len(names)} tool(s)", names)

    def _workspace(self) -> Workspace:
        # A server runs in a workspace's folder; for a test, the first workspace or the home.
        workspaces = self.broker.home.settings().workspaces
        if workspaces:
            return workspaces[sorted(workspaces)[0]]
        return Workspace("settings-test", Path(self.broker.home.path))


def _tool_line(tool: Any) -> str:
    description = (getattr(tool, "description", None) or "").strip().splitlines()
    return f"{tool.name} — {description[0]}" if description else str(tool.name)


class DatabaseSection(_Section):
    def __init__(self, broker: Broker) -> None:
        super().__init__(broker, db_profiles.SECTION)

    def has_secret(self, name: str) -> bool:
        return bool(self.broker.credentials.get(db_profiles.password_key(name)))

    def save(self, name: str, raw: dict[str, Any], secrets: dict[str, str | None]) -> None:
        profile = db_profiles.DbProfile.from_json(name, raw)
        password = self._secret(db_profiles.password_key(name), secrets.get("password"))
        db_profiles.save(self.broker.home, self.broker.credentials, profile, password)

    def remove(self, name: str) -> None:
        db_profiles.remove(self.broker.home, self.broker.credentials, name)

    async def test(self, name: str) -> TestResult:
        adapter: Any = self.broker.adapter("db")
        try:
            profile = adapter.profile(name)
            envelope = await adapter.run(profile, "SELECT 1", [], write=False)
        except CallError as err:
            return TestResult(False, err.message)
        except HelmError as err:
            return TestResult(False, str(err))
        if envelope.get("ok"):
            return TestResult(True, f"connected to {profile.where}")
        return TestResult(False, str((envelope.get("error") or {}).get("message", "failed")))


class BrokerConnections:
    """``ConnectionsBackend`` on a running broker."""

    def __init__(self, broker: Broker, oauth: OAuthConnector | None = None) -> None:
        self.broker = broker
        self.services: ProfileSection = ServiceSection(broker)
        self.mcp_servers: ProfileSection = McpSection(broker)
        self.databases: ProfileSection = DatabaseSection(broker)
        self.oauth = oauth

    def store(self) -> StoreInfo:
        return StoreInfo(self.broker.credentials.description, self.broker.credentials.is_keychain)
