"""What one session knows while it runs: its limits, roots, rules, grants and tool calls."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.agents.events import AgentEvent, clip
from broker.agents.fsguard import Root
from broker.agents.policy import GrantKey, Rules
from broker.agents.profiles import AgentProfile
from broker.agents.questions import PermissionAsker
from broker.agents.scrub import ChunkScrubber
from broker.audit import AuditLog, AuditRecord
from broker.decision_point import PointAsker
from broker.errors import SettingsError
from broker.policy import decide as org
from broker.policy import in_force
from broker.settings import Workspace
from broker.summary import Confirmer, Decision
from broker.writes import WritePipeline

log = logging.getLogger("helm.agents")

STARTUP_ENV = "HELM_ACP_STARTUP_TIMEOUT"
ENDED = "the agent ended before the question was answered"
"""Why a question still open when the agent ended was refused (audit reason, event text)."""


@dataclass(frozen=True)
class Limits:
    """Every wait of an agent session, in seconds."""

    startup: float = 60.0
    """initialize and session/new (or session/load) together."""
    cancel_grace: float = 5.0
    """After session/cancel, before SIGTERM."""
    term_grace: float = 3.0
    """After SIGTERM, before SIGKILL of the whole process group."""
    idle_grace: float = 120.0
    """A warm connection with no session is closed after this."""
    question_timeout: float = 600.0
    """A permission or write question left unanswered is a refusal after this."""
    turn_timeout: float = 3600.0
    """A prompt turn still running after this is cancelled."""
    quiet_after: float = 30.0
    """A turn whose agent has said nothing for this long is said to be quiet (``AgentQuiet``),
    again at twice as long, and so on; a question the user has open does not count."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, with the start-up deadline from ``HELM_ACP_STARTUP_TIMEOUT`` if set."""
        raw = (os.environ if environ is None else environ).get(STARTUP_ENV)
        if raw is None or raw == "":
            return cls()
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not 0 < value <= 3600:
            raise SettingsError(f"{STARTUP_ENV} must be a number of seconds between 0 and 3600, not {raw!r}")
        return cls(startup=value)


@dataclass(frozen=True)
class ToolFacts:
    kind: str
    title: str
    content: str
    locations: tuple[str, ...]
    digest: str = ""
    """The sha256 of the tool call's whole content (diffs included): what a grant covers."""


class ToolBook:
    """The tool calls a session has announced (a permission request may carry only the id).

    Bounded: the oldest entries go first, and every text is clipped.
    """

    def __init__(self, limit: int = 512) -> None:
        self._limit = limit
        self._calls: OrderedDict[str, ToolFacts] = OrderedDict()

    def get(self, tool_id: str) -> ToolFacts | None:
        return self._calls.get(tool_id)

    def note(self, tool_id: str, facts: ToolFacts) -> None:
        old = self._calls.pop(tool_id, None)
        if old is not None:
            facts = ToolFacts(
                facts.kind or old.kind,
                facts.title or old.title,
                facts.content or old.content,
                facts.locations or old.locations,
                facts.digest or old.digest,
            )
        self._calls[clip(tool_id, 200)] = facts
        while len(self._calls) > self._limit:
            self._calls.popitem(last=False)


def new_decision_id() -> str:
    return uuid.uuid4().hex


@dataclass
class SessionState:
    """One session's context, shared by the handlers that serve the agent."""

    session_id: str
    profile: AgentProfile
    workspace: Workspace
    roots: tuple[Root, ...]
    rules: Rules
    home: Path
    audit: AuditLog
    asker: PermissionAsker
    confirmer: Confirmer
    limits: Limits
    scrub: Callable[[str], str]
    push: Callable[[AgentEvent], None]
    writes: WritePipeline
    """The one write pipeline (``broker.writes``) every file write of the session goes through."""
    point: PointAsker | None = None
    """The organisation's decision point, asked about every permission request (``broker.decision_point``)."""
    chunks: ChunkScrubber = field(default_factory=lambda: ChunkScrubber(None))
    """Scrubs the key from what is streamed, across chunk boundaries (see ``emit``)."""
    grants: dict[GrantKey, str] = field(default_factory=dict)
    tools: ToolBook = field(default_factory=ToolBook)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the turn failed (the agent ended): every open question is dropped, refused."""
    serving: set[asyncio.Future[None]] = field(default_factory=set)
    """One future per request being served that may ask the user (see ``asking``)."""

    def organisation(self, write: bool) -> str | None:
        """Why the organisation's policy refuses this agent now (``write``: a change to files),
        or None; asked at every request, so a policy that changes applies to the next one."""
        state = in_force()
        if not state.managed:
            return None
        found = org.agent(state, self.profile.name, self.profile.command)
        if found is None and write:
            found = org.agent_writes(state)
        return None if found is None else found.message

    def emit(self, event: AgentEvent) -> None:
        """Stream ``event`` to the consumer with the key removed (a chunk that may end in half
        the key is held back until the next event)."""
        for out in self.chunks.events(event):
            self.push(out)

    def record(self, operation: str, decision: str, outcome: str, **details: Any) -> None:
        """One audit record for this session (``details``: title, request_digest, decision_id,
        reason)."""
        self.audit.record(
            AuditRecord(
                workspace=self.workspace.name,
                extension="agent",
                connection=self.profile.name,
                kind="agent",
                operation=operation,
                decision=decision,
                outcome=outcome,
                **details,
            )
        )

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """Around serving one request that may ask the user, until its outcome is recorded and
        streamed: ``drop_questions`` waits for it."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.serving.add(done)
        try:
            yield
        finally:
            self.serving.discard(done)
            done.set_result(None)

    async def drop_questions(self, within: float) -> None:
        """The agent ended: refuse every open question, and wait (up to ``within``) until each
        refusal is recorded and streamed, so it comes before the turn's last event."""
        self.ended.set()
        if self.serving:
            await asyncio.wait(set(self.serving), timeout=within)

    async def ask[T](self, question: Awaitable[T]) -> tuple[Decision, T | None]:
        """Put a question to the user: CONFIRMED and the answer, or EXPIRED (no answer in
        time) or DECLINED (the turn was cancelled, the agent ended, or the question failed)
        and None."""
        task: asyncio.Future[T] = asyncio.ensure_future(question)
        stops: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(e.wait()) for e in (self.cancelled, self.ended)
        ]
        try:
            waiting: list[asyncio.Future[Any]] = [task, *stops]
            done, _ = await asyncio.wait(
                waiting, timeout=self.limits.question_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            for stop in stops:
                stop.cancel()
            if not task.done():
                task.cancel()
        if task not in done:
            return (Decision.DECLINED if done else Decision.EXPIRED), None
        try:
            return Decision.CONFIRMED, task.result()
        except (asyncio.CancelledError, Exception):  # noqa: BLE001 - a broken question is a refusal
            log.warning("a question to the user failed; the agent's request is refused")
            return Decision.DECLINED, None


def kept(value: Any) -> str:
    return value if isinstance(value, str) else ""
