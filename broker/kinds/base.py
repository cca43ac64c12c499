"""The one small interface every connection kind implements, and the models it hands around.

A kind is a package under ``broker/kinds/`` whose ``__init__`` exports ``SPECS``: one
``broker.kinds.spec.KindSpec`` per kind it implements (see docs/architecture.md). The broker
does the generic part of a call (rate limit, allowlist, approval, write tokens, audit,
envelope) and hands the kind a validated ``Call`` carrying the kind's own typed ``Connection``,
parsed once when the manifest was loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from broker.audit import AuditLog
    from broker.context import CallContext
    from broker.credentials import CredentialStore
    from broker.mcp.servers import McpServers
    from broker.policy import PolicyState
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
    ``file``: for a file write, which file (the root's name, then the path inside it), for
    the audit log.
    """

    title: str
    fields: tuple[tuple[str, str], ...]
    request: str
    binding: Mapping[str, JSON]
    diff: str | None = None
    file: str = ""


@dataclass(frozen=True)
class Connection:
    """One declared connection, parsed once when its manifest loads (each kind subclasses it
    with its own fields). ``operations`` is the allowlist: operation name → whether it writes."""

    id: str
    kind: str
    operations: Mapping[str, bool]

    @property
    def profile(self) -> str | None:
        """The name of the profile it uses, in its kind's ``ProfileSpec`` section (None: none)."""
        return None


@dataclass(frozen=True)
class Call[C: Connection]:
    """One call, as the broker hands it to a kind after the generic checks."""

    ctx: CallContext
    workspace: Workspace
    connection: C
    operation: str
    args: Mapping[str, JSON]
    write: bool
    approval: Mapping[str, JSON] = field(default_factory=dict)
    """Kind-specific data pinned at approval (e.g. MCP tool digests)."""
    settings: Settings | None = None
    """For a read, the settings it was checked against: a kind reads its profiles from them
    (``ProfileStore.get(name, call.settings)``), so one call sees one reading of the file.
    None for a write, which may wait for the user: its profile is read when it is sent."""
    policy: PolicyState | None = None
    """For a read, the organisation's policy it was checked against, which a kind asks of its
    profile (``ProfileStore.refusal(profile, call.policy)``): one look at the policy files per
    call, as there is one reading of the settings. None for a write: the policy in force when
    it is sent."""

    @property
    def connection_id(self) -> str:
        return self.connection.id


@dataclass(frozen=True)
class KindEnv:
    """What every kind may use: the Helm home (settings re-read when they change on disk),
    the credential store, the broker's audit log (None: the home's, opened when needed) and
    the broker's MCP sessions, shared with MCP Apps (None: a kind that needs them makes its own)."""

    home: Home
    credentials: CredentialStore
    audit: AuditLog | None = None
    mcp_servers: Callable[[], McpServers] | None = None

    @property
    def settings(self) -> Settings:
        return self.home.settings()


class Kind[C: Connection](Protocol):
    """The running part of a kind: one instance per broker, built from a ``KindEnv``."""

    async def pin(self, workspace: Workspace, conn: C) -> Mapping[str, JSON]:
        """Kind-specific facts the approval pins (e.g. MCP tool digests); ``{}`` for most kinds."""
        ...

    async def describe(self, call: Call[C]) -> WriteDetails:
        """Validate a write's arguments and describe it exactly as it would be sent."""
        ...

    async def execute(self, call: Call[C]) -> dict[str, JSON]:
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

    async def pin(self, workspace: Workspace, conn: Any) -> Mapping[str, JSON]: ...

    async def pin_changes(self, workspace: Workspace, conn: Any, pinned: Mapping[str, JSON]) -> list[str]: ...
