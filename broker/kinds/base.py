"""The one small interface every connection kind implements.

A kind is a package under ``broker/kinds/`` with a ``rules`` module (manifest lint and review,
no I/O) and an adapter class (the calls); adding a kind means adding that package and one line
in ``broker/kinds/__init__.py``. The broker does the
generic part of a call (rate limit, allowlist, approval, write tokens, audit, envelope) and
hands the kind a validated ``Call``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from broker.audit import AuditLog
    from broker.context import CallContext
    from broker.credentials import CredentialStore
    from broker.settings import Home, Settings, Workspace

JSON = Any
"""A value that came from ``json.loads`` (kept as ``Any`` for the type checker)."""


@dataclass(frozen=True)
class Issue:
    """One manifest problem: a JSON path (``$.connections[0].calls.x.path``) and a message."""

    path: str
    message: str


@dataclass(frozen=True)
class ReviewItem:
    """One line of the plugin review: what an extension may do through a connection."""

    label: str
    detail: str
    write: bool = False


@dataclass(frozen=True)
class ConnectionReview:
    """Everything plugin review shows for one declared connection."""

    id: str
    kind: str
    target: str
    items: tuple[ReviewItem, ...]
    warnings: tuple[str, ...] = ()

    @property
    def reads(self) -> tuple[ReviewItem, ...]:
        return tuple(i for i in self.items if not i.write)

    @property
    def writes(self) -> tuple[ReviewItem, ...]:
        return tuple(i for i in self.items if i.write)


@dataclass(frozen=True)
class WriteDetails:
    """What a kind contributes to a write's confirmation dialog.

    ``binding`` is the exact request Helm will send (for http: method, URL and body; for files:
    path, expected hash and new text); the confirmation token is bound to its digest.
    """

    title: str
    fields: tuple[tuple[str, str], ...]
    request: str
    binding: Mapping[str, JSON]
    diff: str | None = None


@dataclass(frozen=True)
class Call:
    """One call, as the broker hands it to a kind after the generic checks."""

    ctx: CallContext
    workspace: Workspace
    connection: Mapping[str, JSON]
    operation: str
    args: Mapping[str, JSON]
    write: bool
    approval: Mapping[str, JSON] = field(default_factory=dict)
    """Kind-specific data pinned at approval (e.g. MCP tool digests)."""

    @property
    def connection_id(self) -> str:
        return str(self.connection["id"])


@dataclass(frozen=True)
class KindEnv:
    """What every kind may use: the Helm home (settings re-read when they change on disk),
    the credential store, and the broker's audit log (None: the home's, opened when needed)."""

    home: Home
    credentials: CredentialStore
    audit: AuditLog | None = None

    @property
    def settings(self) -> Settings:
        return self.home.settings()


class KindRules(Protocol):
    """The static part of a kind: manifest rules and review, no I/O (a kind's ``rules`` module)."""

    def lint(self, conn: Mapping[str, JSON], path: str, manifest: Mapping[str, JSON]) -> Iterable[Issue]:
        """Cross-field rules the JSON Schema cannot express, for one connection at ``path``."""
        ...

    def review(self, conn: Mapping[str, JSON]) -> ConnectionReview:
        """What plugin review shows for this connection."""
        ...

    def operations(self, conn: Mapping[str, JSON]) -> Mapping[str, bool]:
        """The allowlist: operation name → whether it is a write."""
        ...


class Kind(Protocol):
    """The running part of a kind: one instance per broker, built from a ``KindEnv``."""

    async def pin(self, workspace: Workspace, conn: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """Kind-specific facts the approval pins (e.g. MCP tool digests); ``{}`` for most kinds."""
        ...

    async def describe(self, call: Call) -> WriteDetails:
        """Validate a write's arguments and describe it exactly as it would be sent."""
        ...

    async def execute(self, call: Call) -> dict[str, JSON]:
        """Run the call; return the success envelope (see ``broker.envelope``) or raise
        ``CallError``. For a write, ``execute`` is only reached with a redeemed token."""
        ...

    async def aclose(self) -> None:
        """Close sessions, pools and children the kind holds."""
        ...


@runtime_checkable
class PinReviewer(Protocol):
    """Implemented by kinds that pin something beside the manifest (MCP tools): says what
    changed. For these kinds ``pin`` reads the live definitions and raises ``CallError``
    (``not_configured``, ``unavailable``) when it cannot; a connection left unpinned at approval
    is pinned by the broker at its first call (trust on first use)."""

    async def pin(self, workspace: Workspace, conn: Mapping[str, JSON]) -> Mapping[str, JSON]: ...

    async def pin_changes(
        self, workspace: Workspace, conn: Mapping[str, JSON], pinned: Mapping[str, JSON]
    ) -> list[str]: ...


@dataclass(frozen=True)
class KindSpec:
    """A registry entry: the kind's rules and where its adapter class lives.

    The adapter is named as ``"package.module:Class"`` and imported on first use, so commands
    that only read manifests (lint, review, ``--version``) do not load every kind's libraries.
    """

    name: str
    rules: KindRules
    adapter: str
    scalar_args: bool = False
    """Every argument of a call must be a string, number, boolean or null — also the ones no
    placeholder uses (http, db). The broker refuses anything else before the kind is reached."""

    def load(self) -> Callable[[KindEnv], Kind]:
        module, _, attr = self.adapter.partition(":")
        factory: Callable[[KindEnv], Kind] = getattr(importlib.import_module(module), attr)
        return factory
