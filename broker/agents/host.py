"""``AgentHost``: where sessions come from, and the warm connections between them.

Built once (in ``app/``) on the Helm home and the credential store, and closed at exit. A
connection whose session closed cleanly stays warm for the next session of the same agent,
workspace and projects, and is stopped after ``idle_grace`` seconds without one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from broker import teams
from broker.agents import profiles
from broker.agents.connection import AgentConnection, ConnectionKey
from broker.agents.fsguard import Root
from broker.agents.policy import Rules
from broker.agents.profiles import AgentProfile
from broker.agents.questions import PermissionAsker
from broker.agents.scrub import ChunkScrubber, scrubber
from broker.agents.session import AgentSession, SessionRequest
from broker.agents.state import Limits, SessionState
from broker.audit import FILE_NAME, AuditLog
from broker.credentials import CredentialStore
from broker.decision_point import DecisionPoints, PointAsker
from broker.errors import ProfileError, SettingsError
from broker.export import AuditExporter
from broker.policy import PolicyState, in_force, managed
from broker.policy import decide as org
from broker.profiles import ProfileStore
from broker.settings import Home, Workspace
from broker.summary import Confirmer
from broker.tokens import TokenBook
from broker.writes import WritePipeline


@dataclass(frozen=True)
class Plan:
    """A session request resolved against settings: the profile, the folders, the key."""

    key: ConnectionKey
    profile: AgentProfile
    workspace: Workspace
    projects: tuple[str, ...]
    roots: tuple[Root, ...]
    cwd: Path
    secret: str | None
    resume: str | None


def _roots(workspace: Workspace, projects: tuple[str, ...]) -> tuple[Root, ...]:
    if not projects:
        return (Root("Workspace", workspace.name, workspace.root),)
    roots = []
    for project in projects:
        folder = workspace.projects.get(project)
        if folder is None:
            raise SettingsError(f"no project {project!r} in workspace {workspace.name!r}")
        roots.append(Root("Project", project, folder))
    return tuple(roots)


def _fingerprint(profile: AgentProfile, secret: str | None) -> str:
    raw = json.dumps([profile.to_json(), hashlib.sha256((secret or "").encode()).hexdigest()])
    return hashlib.sha256(raw.encode()).hexdigest()


class AgentHost:
    def __init__(
        self,
        home: Home,
        credentials: CredentialStore,
        *,
        limits: Limits | None = None,
        writes: WritePipeline | None = None,
        point: PointAsker | None = None,
    ) -> None:
        """``writes``: the write pipeline file writes go through (the broker's, ``Broker.writes``,
        so one token book and audit log — and its export — serve every write and decision; by
        default one of the host's own, exported to the sinks the settings and the organisation's
        policy name, as ``helm agent`` runs it). ``point``: the organisation's decision point (by
        default the one the policy names, else the settings)."""
        self.home = home
        self.credentials = credentials
        self.limits = limits or Limits.from_env()
        self.export: AuditExporter | None = None
        if writes is not None:
            self.audit = writes.audit
        else:
            user = lambda: teams.audit_sinks(home.settings())  # noqa: E731
            self.export = AuditExporter(user, policy=managed.audit_sinks)
            self.audit = AuditLog(home.path / FILE_NAME, tap=self.export.audit)
        self.writes = writes or WritePipeline(TokenBook(), self.audit, _unchanging)
        self.point = point if point is not None else DecisionPoints(home, credentials)
        self._idle: dict[ConnectionKey, tuple[AgentConnection, asyncio.Task[None]]] = {}
        self._sessions: set[AgentSession] = set()
        self._closed = False

    async def __aenter__(self) -> AgentHost:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def plan(self, request: SessionRequest) -> Plan:
        """Resolve ``request`` (raises ``SettingsError``/``ProfileError`` for a wrong name)."""
        store = profiles.AGENTS.store(self.home, self.credentials)
        profile = store.load(request.agent)
        refusal = org.agent(in_force(), profile.name, profile.command)
        if refusal is not None:
            raise ProfileError(refusal.message)
        workspace = self.home.settings().workspace(request.workspace)
        roots = _roots(workspace, request.projects)
        secret = profiles.key_for(store, profile)
        key = ConnectionKey(
            profile.name, workspace.name, ",".join(request.projects), _fingerprint(profile, secret)
        )
        return Plan(key, profile, workspace, request.projects, roots, roots[0].folder, secret, request.resume)

    def session(
        self, request: SessionRequest, *, asker: PermissionAsker, confirmer: Confirmer
    ) -> AgentSession:
        """A new session (nothing starts until its first ``run``)."""
        if self._closed:
            raise SettingsError("the agent host is closed")
        plan = self.plan(request)
        state = SessionState(
            session_id="", profile=plan.profile, workspace=plan.workspace, roots=plan.roots,
            rules=Rules(write=request.write, allow_reads=plan.profile.allow_reads),
            home=self.home.path, audit=self.audit, asker=asker, confirmer=confirmer, limits=self.limits,
            scrub=scrubber(plan.secret), chunks=ChunkScrubber(plan.secret), push=_nowhere,
            writes=self.writes, point=self.point,
        )  # fmt: skip
        session = AgentSession(self, plan, state)
        self._sessions.add(session)
        return session

    async def take_warm(self, key: ConnectionKey) -> AgentConnection | None:
        """A warm connection for ``key`` (its idle timer stopped), or None."""
        entry = self._idle.pop(key, None)
        if entry is None:
            return None
        conn, timer = entry
        timer.cancel()
        if conn.alive:
            return conn
        await conn.close()  # it exited while it waited
        return None

    async def release(self, conn: AgentConnection, *, reuse: bool) -> None:
        """A session is done with ``conn``: keep it warm, or stop it."""
        if not reuse or not conn.alive or self._closed:
            await conn.close()
            return
        old = self._idle.pop(conn.key, None)
        if old is not None:
            old[1].cancel()
            await old[0].close()
        timer = asyncio.create_task(self._expire(conn), name="helm.agents.idle")
        self._idle[conn.key] = (conn, timer)

    async def _expire(self, conn: AgentConnection) -> None:
        await asyncio.sleep(self.limits.idle_grace)
        if self._idle.get(conn.key, (None,))[0] is conn:
            del self._idle[conn.key]
        await conn.close()

    async def stop_forbidden(self) -> tuple[str, ...]:
        """End every session, and stop every warm agent, of an agent the organisation's policy
        does not allow now (each of its requests is refused anyway); the agents stopped."""
        state = in_force()
        if not state.managed:
            return ()
        stopped: set[str] = set()
        for session in list(self._sessions):
            profile = session.state.profile
            if org.agent(state, profile.name, profile.command) is not None:
                stopped.add(profile.name)
                await session.stop()
        store = profiles.AGENTS.store(self.home, self.credentials)
        for key in [k for k in self._idle if _forbidden(state, store, k.profile)]:
            conn, timer = self._idle.pop(key)
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
            await conn.close()
            stopped.add(key.profile)
        return tuple(sorted(stopped))

    def forget_session(self, session: AgentSession) -> None:
        self._sessions.discard(session)

    @property
    def warm(self) -> int:
        """How many warm connections wait for a session."""
        return len(self._idle)

    async def aclose(self) -> None:
        """Close every session and stop every agent."""
        self._closed = True
        for session in list(self._sessions):
            await session.close()
        while self._idle:
            _, (conn, timer) = self._idle.popitem()
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
            await conn.close()
        if self.export is not None:
            await asyncio.to_thread(self.export.close)


def _forbidden(state: PolicyState, store: ProfileStore[AgentProfile], name: str) -> bool:
    try:
        profile = store.get(name)
    except ProfileError:
        return True  # it cannot be told what it runs now: stop it
    return profile is None or org.agent(state, profile.name, profile.command) is not None


def _nowhere(event: object) -> None:
    return None


def _unchanging() -> object:
    """An agent's write is prepared once: its binding holds the file's hash, not settings."""
    return _unchanging
