"""Governed coding agents: ACP agents run inside Helm's boundary (no Qt here).

``broker.agents.provision`` installs and verifies agent adapters from the npm registry.

The session API a front end (the CLI, the Agents page) uses::

    async with AgentHost(home, credentials) as host:
        session = host.session(SessionRequest("claude", "main", write=True),
                               asker=my_asker, confirmer=my_confirmer)
        async for event in session.run("Fix the failing test"):
            show(event)                 # SessionStarted, MessageChunk, ToolCallEvent, …
        await session.cancel()          # from another task, e.g. a Cancel button
        await session.close()           # the agent stays warm for the next session

``my_asker`` answers ``PermissionQuestion`` objects (a ``PermissionAsker``); ``my_confirmer``
answers the ``WriteSummary`` of each file write (``broker.summary.Confirmer``, the same as
every other write). Events are frozen dataclasses with ``as_json()``.
"""

from broker.agents.events import (
    AgentEvent,
    AgentFailed,
    AgentQuiet,
    FileAccess,
    MessageChunk,
    PermissionDecided,
    PlanEntryView,
    PlanUpdated,
    SessionStarted,
    TerminalRefused,
    ThoughtChunk,
    ToolCallEvent,
    TurnEnded,
)
from broker.agents.history import PastSession, past_sessions
from broker.agents.host import AgentHost
from broker.agents.policy import Option, Verdict
from broker.agents.profiles import AgentProfile
from broker.agents.questions import PermissionAsker, PermissionQuestion
from broker.agents.session import AgentSession, SessionRequest
from broker.agents.state import Limits

__all__ = [
    "AgentEvent",
    "AgentFailed",
    "AgentHost",
    "AgentProfile",
    "AgentQuiet",
    "AgentSession",
    "FileAccess",
    "Limits",
    "MessageChunk",
    "Option",
    "PastSession",
    "PermissionAsker",
    "PermissionDecided",
    "PermissionQuestion",
    "PlanEntryView",
    "PlanUpdated",
    "SessionRequest",
    "SessionStarted",
    "TerminalRefused",
    "ThoughtChunk",
    "ToolCallEvent",
    "TurnEnded",
    "Verdict",
    "past_sessions",
]
