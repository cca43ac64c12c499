"""Shared set-up for agent tests: a Helm home with a workspace, the scripted agent, fakes for
the user's answers, and short limits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker.agents import (
    AgentEvent,
    AgentHost,
    AgentSession,
    Limits,
    PermissionQuestion,
    SessionRequest,
    profiles,
)
from broker.agents.profiles import AgentProfile
from broker.credentials import FileStore
from broker.settings import Home
from broker.workspaces import add_workspace
from tests.helpers import ScriptedConfirmer
from tests.support import REPO

AGENT = str(REPO / "tests" / "servers" / "acp" / "scripted_agent.py")
KEY = "agent-key-7f3e9a1c5b"
SHORT = Limits(
    startup=20.0, cancel_grace=1.0, term_grace=1.0, idle_grace=30.0, question_timeout=5.0, quiet_after=600.0
)
TURN_TIMEOUT = 30.0


@dataclass
class Setup:
    home: Home
    credentials: FileStore
    root: Path

    def add_agent(
        self, name: str = "scripted", *args: str, key: str | None = None, **kw: Any
    ) -> AgentProfile:
        profile = AgentProfile(name, (sys.executable, AGENT, *args), "AGENT_KEY" if key else None, **kw)
        profiles.AGENTS.store(self.home, self.credentials).save(profile, {"key": key})
        return profile

    def host(self, limits: Limits = SHORT) -> AgentHost:
        return AgentHost(self.home, self.credentials, limits=limits)


def make_setup(tmp_path: Path) -> Setup:
    home = Home(tmp_path / "home")
    home.ensure()
    root = tmp_path / "root"
    root.mkdir()
    add_workspace(home, "ws", root)
    return Setup(home, FileStore(home.path / "credentials.json"), root.resolve())


@dataclass
class FakeAsker:
    """Answers permission questions like a person would: ``pick`` chooses an option id."""

    pick: Callable[[PermissionQuestion], str | None] = lambda q: None
    asked: list[PermissionQuestion] = field(default_factory=list)

    async def __call__(self, question: PermissionQuestion) -> str | None:
        self.asked.append(question)
        return self.pick(question)


class NeverAnswers:
    """A question left open: the user walked away."""

    asked = 0

    async def __call__(self, question: Any) -> Any:
        self.asked += 1
        await asyncio.Event().wait()


def request(
    *, write: bool = False, resume: str | None = None, projects: tuple[str, ...] = ()
) -> SessionRequest:
    return SessionRequest("scripted", "ws", projects=projects, write=write, resume=resume)


def session(host: AgentHost, *, asker: Any = None, confirmer: Any = None, **kw: Any) -> AgentSession:
    return host.session(request(**kw), asker=asker or FakeAsker(), confirmer=confirmer or ScriptedConfirmer())


async def turn(session: AgentSession, steps: list[dict[str, Any]]) -> list[AgentEvent]:
    """Every event of one turn (with a timeout on the whole turn)."""
    events: list[AgentEvent] = []

    async def collect() -> None:
        async for event in session.run(json.dumps(steps)):
            events.append(event)

    await asyncio.wait_for(collect(), TURN_TIMEOUT)
    return events


def said(events: list[AgentEvent]) -> list[str]:
    """What the agent said (its message chunks), in order."""
    return [e.text for e in events if e.type == "message" and e.role == "agent"]  # type: ignore[attr-defined]


def last(events: list[AgentEvent]) -> AgentEvent:
    return events[-1]


def alive(pid: int) -> bool:
    """The process runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@contextlib.contextmanager
def reaped(pids: list[int]) -> Iterator[list[int]]:
    """``pids`` (filled in by the test) are killed at the end, so a failing test leaks none."""
    try:
        yield pids
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
