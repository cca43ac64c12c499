"""How a build's session reports to its ``Build``: the questions it puts to the user, and how its
turn ended. The runner (the Agents tab) wraps the session's asker and confirmer with
``WatchedAsker`` / ``WatchedConfirmer`` and hands each event of the turn to ``observe``."""

from __future__ import annotations

from broker.agents.events import AgentEvent, AgentFailed, TurnEnded
from broker.agents.questions import PermissionAsker, PermissionQuestion
from broker.orchestrate.builds import Build
from broker.summary import Confirmer, Decision, WriteSummary


class WatchedAsker:
    """``ask`` counting its open questions on ``build`` (it is *waiting* while one is open)."""

    def __init__(self, build: Build, ask: PermissionAsker) -> None:
        self.build, self.ask = build, ask

    async def __call__(self, question: PermissionQuestion) -> str | None:
        self.build.asking += 1
        try:
            return await self.ask(question)
        finally:
            self.build.asking -= 1


class WatchedConfirmer:
    """``confirm`` counting its open questions on ``build``."""

    def __init__(self, build: Build, confirm: Confirmer) -> None:
        self.build, self.confirm = build, confirm

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.build.asking += 1
        try:
            return await self.confirm(summary)
        finally:
            self.build.asking -= 1


def observe(build: Build, event: AgentEvent) -> None:
    """Note how the turn ended, from its last event."""
    if isinstance(event, TurnEnded):
        build.ended(event.stop_reason)
    elif isinstance(event, AgentFailed):
        build.failed()
