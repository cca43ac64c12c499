"""What a session streams to its consumer (the CLI, the Agents page): small frozen events.

Every string in an event may come from the agent: show it as plain text (the CLI escapes
terminal control characters; a Qt view uses plain-text widgets). Texts are cut to
``MAX_TEXT`` characters so a queue of events has a known size.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, ClassVar

from acp import schema

MAX_TEXT = 64 * 1024


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class Event:
    """Base of every event; ``as_json`` gives one JSON object with its ``type``."""

    type: ClassVar[str]

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        return {"type": self.type, **data}


@dataclass(frozen=True)
class SessionStarted(Event):
    """The session is ready: a new one, or a past one loaded (``resumed``).

    ``note`` says why a past session could not be loaded and a new one was started instead.
    """

    type: ClassVar[str] = "session_started"
    session_id: str
    agent: str
    workspace: str
    resumed: bool = False
    note: str = ""


@dataclass(frozen=True)
class MessageChunk(Event):
    type: ClassVar[str] = "message"
    text: str
    role: str = "agent"  # "agent" or "user" (a replayed user message of a loaded session)
    message_id: str = ""
    """The message this chunk belongs to, when the agent says: a change of it starts a new
    message (chunks without one continue the message before)."""

    def starts_new_message(self, before: MessageChunk | None) -> bool:
        """Whether this chunk begins another message than ``before`` (the last chunk shown)."""
        return (
            before is not None
            and before.role == self.role
            and bool(self.message_id)
            and bool(before.message_id)
            and before.message_id != self.message_id
        )


@dataclass(frozen=True)
class AgentQuiet(Event):
    """The agent has sent nothing for ``seconds`` while its turn runs: it may be working, or
    waiting on something that will not come. Cancel ends the turn."""

    type: ClassVar[str] = "quiet"
    agent: str
    seconds: int


@dataclass(frozen=True)
class ThoughtChunk(Event):
    type: ClassVar[str] = "thought"
    text: str


@dataclass(frozen=True)
class ToolCallEvent(Event):
    """A tool call started (``update`` false) or changed; empty fields did not change."""

    type: ClassVar[str] = "tool_call"
    id: str
    title: str
    kind: str
    status: str
    content: str = ""
    update: bool = False


@dataclass(frozen=True)
class PlanEntryView:
    content: str
    priority: str
    status: str


@dataclass(frozen=True)
class PlanUpdated(Event):
    type: ClassVar[str] = "plan"
    entries: tuple[PlanEntryView, ...]


@dataclass(frozen=True)
class PermissionDecided(Event):
    """Helm's answer to one permission request (also in the audit log, same decision id)."""

    type: ClassVar[str] = "permission"
    decision_id: str
    title: str
    kind: str
    verdict: str  # allow | deny | ask
    decision: str  # allowed | refused | confirmed | declined | expired
    answer: str  # the option kind Helm answered with, or "cancelled"
    reason: str
    sticky: bool = False


@dataclass(frozen=True)
class FileAccess(Event):
    """The agent read or wrote a file through Helm (``outcome`` "ok" or an error code)."""

    type: ClassVar[str] = "file"
    operation: str  # read | write
    path: str
    decision: str
    outcome: str
    message: str = ""


@dataclass(frozen=True)
class TerminalRefused(Event):
    """The agent asked for a terminal (``terminal/create``) and Helm refused: it offers none.

    ``command`` is the command line the agent asked for, its arguments quoted as a shell
    would (never run by one). Not in the audit log: nothing ran and nothing was decided.
    """

    type: ClassVar[str] = "terminal"
    command: str


@dataclass(frozen=True)
class TurnEnded(Event):
    """The prompt turn is over: ``stop_reason`` is ACP's (end_turn, refusal, cancelled…)."""

    type: ClassVar[str] = "turn_ended"
    stop_reason: str


@dataclass(frozen=True)
class AgentFailed(Event):
    """The session ended on an error: start-up deadline, crash, protocol error."""

    type: ClassVar[str] = "failed"
    message: str
    exit_code: int | None = None
    stderr_tail: str = ""


AgentEvent = (
    SessionStarted
    | MessageChunk
    | ThoughtChunk
    | ToolCallEvent
    | PlanUpdated
    | PermissionDecided
    | FileAccess
    | TerminalRefused
    | TurnEnded
    | AgentFailed
    | AgentQuiet
)


def scrubbed[E: Event](event: E, scrub: Callable[[str], str]) -> E:
    """``event`` with ``scrub`` applied to each of its texts (the agent's key removed)."""
    changes = {k: scrub(v) for k, v in vars(event).items() if isinstance(v, str)}
    return replace(event, **changes)  # type: ignore[type-var]


def block_text(block: Any) -> str:
    """The text of one ACP content block; other media are named, not shown."""
    if isinstance(block, schema.TextContentBlock):
        return block.text
    if isinstance(block, schema.ResourceContentBlock):
        return f"[resource {block.uri}]"
    if isinstance(block, schema.EmbeddedResourceContentBlock):
        return "[embedded resource]"
    return f"[{getattr(block, 'type', 'content')}]"


def tool_content_text(content: list[Any] | None) -> str:
    """A tool call's content as text: its text blocks, and edits named by path."""
    parts: list[str] = []
    for item in content or []:
        if isinstance(item, schema.FileEditToolCallContent):
            parts.append(f"[edit {item.path}]")
        elif isinstance(item, schema.ContentToolCallContent):
            parts.append(block_text(item.content))
        else:
            parts.append("[terminal output]")
    return clip("\n".join(parts))


def content_digest(content: list[Any] | None) -> str:
    """The sha256 of a tool call's whole content (every text and diff), or "" for none."""
    if not content:
        return ""
    raw = json.dumps([item.model_dump(mode="json", by_alias=True) for item in content], sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


def update_event(update: Any) -> AgentEvent | None:
    """The event for one ``session/update`` (None for updates Helm does not show)."""
    if isinstance(update, schema.AgentMessageChunk):
        return MessageChunk(clip(block_text(update.content)), message_id=clip(update.message_id or "", 200))
    if isinstance(update, schema.UserMessageChunk):
        return MessageChunk(clip(block_text(update.content)), role="user")
    if isinstance(update, schema.AgentThoughtChunk):
        return ThoughtChunk(clip(block_text(update.content)))
    if isinstance(update, schema.ToolCallStart | schema.ToolCallProgress):
        return ToolCallEvent(
            id=clip(update.tool_call_id, 200),
            title=clip(update.title or "", 500),
            kind=update.kind or "",
            status=update.status or "",
            content=tool_content_text(update.content),
            update=isinstance(update, schema.ToolCallProgress),
        )
    if isinstance(update, schema.AgentPlanUpdate):
        entries = tuple(
            PlanEntryView(clip(e.content, 500), e.priority, e.status) for e in update.entries[:100]
        )
        return PlanUpdated(entries)
    return None
