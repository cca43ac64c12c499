"""One agent session: start-up (or load), prompt turns streamed as events, cancel, close.

``AgentSession.run(prompt)`` is an async iterator of events for one turn; the first turn also
starts the agent (or takes a warm one) and the session, inside the start-up deadline. The last
event of a turn is ``TurnEnded`` or ``AgentFailed``. ``cancel()`` (from any task) sends
``session/cancel``, refuses every question still open, waits ``cancel_grace``, then ends the
agent's whole process group (SIGTERM, ``term_grace``, SIGKILL).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from broker.agents import history
from broker.agents.connection import AgentConnection
from broker.agents.events import AgentEvent, AgentFailed, AgentQuiet, SessionStarted, TurnEnded
from broker.agents.flow import Flow
from broker.agents.state import SessionState
from broker.errors import AgentError

if TYPE_CHECKING:
    from broker.agents.host import AgentHost, Plan

_PUMP_TICK = 0.5


@dataclass(frozen=True)
class SessionRequest:
    """What a session runs: which agent, where, whether it may write, which session to load."""

    agent: str
    workspace: str
    projects: tuple[str, ...] = ()
    write: bool = False
    resume: str | None = None


class AgentSession:
    def __init__(self, host: AgentHost, plan: Plan, state: SessionState) -> None:
        self._host = host
        self._plan = plan
        self.state = state
        self.id: str | None = None
        self._conn: AgentConnection | None = None
        self._flow: Flow | None = None
        self._turn: asyncio.Task[None] | None = None
        self._prompt: asyncio.Task[str] | None = None
        self._ended_by_helm = False
        self._dead = False
        self._closed = False

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    async def run(self, prompt: str) -> AsyncGenerator[AgentEvent]:
        """Stream one prompt turn (starting the session first if needed)."""
        if self.busy or self._closed:
            raise AgentError("this session is busy or closed")
        if self._dead:
            yield AgentFailed("this session's agent has stopped; start a new session")
            return
        if self._flow is None:
            self._conn = await self._host.take_warm(self._plan.key)
            self._flow = self._conn.flow if self._conn is not None else Flow()
        flow = self._flow
        self.state.push = flow.push
        self._turn = asyncio.create_task(self._run_turn(prompt, flow), name="helm.agents.turn")
        quiet = _Quiet(self.state.limits.quiet_after, started=self.id is not None)
        try:
            while True:
                event = await flow.next(_PUMP_TICK)
                if event is None:
                    # The turn may have ended, its final event queued, as the wait ran out.
                    event = flow.pop() if self._turn.done() else None
                if event is None:
                    if self._turn.done():
                        self._turn.result()  # a turn that ended without its final event: a bug
                        return
                    notice = quiet.notice(self._plan.profile.name, asking=bool(self.state.serving))
                    if notice is not None:
                        yield notice
                    continue
                quiet.heard(started=isinstance(event, SessionStarted))
                yield event
                if isinstance(event, TurnEnded | AgentFailed):
                    return
        finally:
            if self.busy:  # the consumer stopped listening: end the turn
                await self.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._turn

    async def _run_turn(self, prompt: str, flow: Flow) -> None:
        try:
            if self.id is None:
                await self._start(prompt, flow)
            final: AgentEvent = TurnEnded(await self._prompt_turn(prompt))
        except AgentError as err:
            self._dead = True
            if self._ended_by_helm:
                err.message = "the agent did not stop after cancel; Helm ended it"
            final = AgentFailed(err.message, err.exit_code, err.stderr_tail)
            await self.state.drop_questions(self.state.limits.term_grace)
        self.state.emit(final)

    async def _start(self, prompt: str, flow: Flow) -> None:
        plan = self._plan
        limits = self.state.limits
        try:
            async with asyncio.timeout(limits.startup):
                if self._conn is None:
                    self._conn = await AgentConnection.spawn(
                        plan.key, plan.profile, plan.secret, plan.cwd, limits, flow
                    )
                    await self._conn.initialize()
                self._conn.client.session = self.state
                resumed, note = await self._open_session()
        except TimeoutError:
            conn = self._conn
            assert conn is not None
            await conn.agent.terminate(limits.term_grace)
            raise conn.agent.failure(
                f"the agent did not start within {limits.startup:g} s (initialize and session/new)"
            ) from None
        assert self.id is not None
        self.state.emit(SessionStarted(self.id, plan.profile.name, plan.workspace.name, resumed, note))
        history.remember(
            self.state.home,
            history.PastSession.now(self.id, plan.profile.name, plan.workspace.name, plan.projects, prompt),
        )

    async def _open_session(self) -> tuple[bool, str]:
        conn, resume = self._conn, self._plan.resume
        assert conn is not None
        note = ""
        if resume is not None and conn.can_load:
            self.id = self.state.session_id = resume
            try:
                await conn.load_session(resume)
                return True, ""
            except AgentError as err:
                if not conn.alive:
                    raise
                note = f"the past session could not be loaded ({err.message}); a new session was started"
                history.forget(self.state.home, resume)
        elif resume is not None:
            note = "this agent cannot load past sessions; a new session was started"
        self.id = self.state.session_id = await conn.new_session()
        return False, note

    async def _prompt_turn(self, prompt: str) -> str:
        conn = self._conn
        assert conn is not None
        assert self.id is not None
        self.state.cancelled.clear()
        self._prompt = asyncio.create_task(conn.prompt(self.id, prompt), name="helm.agents.prompt")
        done, _ = await asyncio.wait({self._prompt}, timeout=self.state.limits.turn_timeout)
        if not done:
            await self.cancel()
        return await self._prompt

    async def cancel(self) -> None:
        """Cancel the running turn: session/cancel, a grace period, then end the process group."""
        conn, prompt = self._conn, self._prompt
        self.state.cancelled.set()  # every open question is refused now
        if conn is None or prompt is None or prompt.done() or self.id is None:
            if self.busy and conn is not None and self.id is None:
                await self._end_agent(conn)  # still starting: nothing to cancel politely
            return
        await conn.cancel(self.id)
        done, _ = await asyncio.wait({prompt}, timeout=self.state.limits.cancel_grace)
        if not done:
            await self._end_agent(conn)

    async def _end_agent(self, conn: AgentConnection) -> None:
        self._ended_by_helm = True
        await conn.agent.terminate(self.state.limits.term_grace)

    async def stop(self) -> None:
        """End the session and stop its agent (none stays warm): the organisation's policy no
        longer allows it."""
        self._ended_by_helm = True
        await self.close()

    async def close(self) -> None:
        """End the session; a healthy agent stays warm for the next session of the same kind."""
        if self._closed:
            return
        self._closed = True
        if self.busy:
            await self.cancel()
            assert self._turn is not None
            with contextlib.suppress(asyncio.CancelledError):
                await self._turn
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.client.session = None
            await self._host.release(conn, reuse=not self._dead and not self._ended_by_helm)
        self._host.forget_session(self)


class _Quiet:
    """When a turn has been quiet long enough to say so: after ``after`` seconds without an
    event, then after twice as long, and so on, once the session has started (starting has its
    own deadline). A question open with the user restarts it."""

    def __init__(self, after: float, *, started: bool) -> None:
        self.after = after
        self.started = started
        self.heard()

    def heard(self, *, started: bool = False) -> None:
        self.started = self.started or started
        self.since = time.monotonic()
        self.next = self.after

    def notice(self, agent: str, *, asking: bool) -> AgentQuiet | None:
        if not self.started:
            return None
        if asking:
            self.heard()
            return None
        quiet_for = time.monotonic() - self.since
        if quiet_for < self.next:
            return None
        self.next *= 2
        return AgentQuiet(agent, int(quiet_for))
