"""What the Agents page's transcript says for each session event, as plain entries (no Qt here).

``Story.entries(event)`` turns one ``broker.agents`` event into ``Entry`` values the transcript
widget writes: streamed text (the agent's message, its thoughts, a replayed user message) that
continues the entry before it, single lines (Helm's verdicts, file accesses, a refused terminal,
the end of a turn),
and *places* — a tool call, the plan — whose text is replaced in place when it changes. Every
string may come from the agent; the widget shows it as characters, hidden ones made visible.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from broker.agents import (
    AgentEvent,
    AgentFailed,
    AgentQuiet,
    FileAccess,
    MessageChunk,
    PermissionDecided,
    PlanUpdated,
    SessionStarted,
    TerminalRefused,
    ThoughtChunk,
    ToolCallEvent,
    TurnEnded,
)

TOOL_LINES = 30
"""A tool call's content shows at most this many lines in the transcript."""


class Style(StrEnum):
    AGENT = "agent"
    THOUGHT = "thought"
    USER = "user"
    TOOL = "tool"
    PLAN = "plan"
    ALLOWED = "allowed"
    REFUSED = "refused"
    NOTE = "note"
    FAILED = "failed"
    DETAIL = "detail"


@dataclass(frozen=True)
class Entry:
    """One piece of the transcript.

    ``stream``: streamed text of this style continues the previous entry when that one was of
    the same style. ``place``: the entry replaces the text of the earlier entry with this key.
    """

    text: str
    style: Style
    stream: bool = False
    place: str | None = None


STATUS = {"pending": "waiting", "in_progress": "running", "completed": "done", "failed": "failed"}
STOPS = {
    "end_turn": "The agent ended its turn.",
    "cancelled": "The turn was cancelled.",
    "refusal": "The agent refused to go on.",
    "max_tokens": "The agent stopped: it reached its token limit.",
    "max_turn_requests": "The agent stopped: it reached its limit of requests in one turn.",
}
DECISIONS = {
    "allowed": "allowed by Helm's policy",
    "refused": "refused by Helm's policy",
    "confirmed": "allowed by you",
    "declined": "refused",
    "expired": "refused (no answer in time)",
}
ALLOWED_WORDS = frozenset({"allowed", "confirmed", "ok", "unchanged"})


def break_long(text: str, column: int, limit: int) -> str:
    """``text`` with a line break wherever a line would pass ``limit`` characters, when the
    line it continues already holds ``column`` characters (a very long paragraph would make the
    view slow; a break inside it reads as the wrapping it gets anyway)."""
    out: list[str] = []
    for i, line in enumerate(text.split("\n")):
        start = column if i == 0 else 0
        pieces = []
        while start + len(line) > limit:
            cut = max(limit - start, 0)
            pieces.append(line[:cut])
            line, start = line[cut:], 0
        out.append("\n".join([*pieces, line]))
    return "\n".join(out)


def _clip_lines(text: str, limit: int = TOOL_LINES) -> str:
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join(lines[:limit]) + f"\n… ({len(lines) - limit} more lines)"


class Story:
    """The transcript's memory between events: each tool call as last known, the turn number."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolCallEvent] = {}
        self.turn = 0

    def prompt(self, text: str) -> list[Entry]:
        """The user's own prompt, at the start of a turn."""
        self.turn += 1
        space = "\n" if self.turn > 1 else ""  # a blank line between turns
        return [Entry(f"{space}You: {text}", Style.USER)]

    def entries(self, event: AgentEvent) -> list[Entry]:
        if isinstance(event, MessageChunk):
            return [Entry(event.text, Style.AGENT if event.role == "agent" else Style.USER, stream=True)]
        if isinstance(event, ThoughtChunk):
            return [Entry(event.text, Style.THOUGHT, stream=True)]
        if isinstance(event, ToolCallEvent):
            return [self._tool(event)]
        if isinstance(event, PlanUpdated):
            return [_plan(event, self.turn)]
        if isinstance(event, PermissionDecided):
            return [_permission(event)]
        if isinstance(event, FileAccess):
            return [_file(event)]
        if isinstance(event, AgentQuiet):
            text = f"{event.agent} has said nothing for {event.seconds} s. It may still be working; "
            text += "Cancel ends the turn."
            return [Entry(text, Style.NOTE)]
        if isinstance(event, TerminalRefused):
            text = f"Helm refused to run a command for the agent (Helm offers no terminal): {event.command}"
            return [Entry(text, Style.REFUSED)]
        if isinstance(event, SessionStarted):
            return _started(event)
        if isinstance(event, TurnEnded):
            return [Entry(STOPS.get(event.stop_reason, f"The turn ended: {event.stop_reason}."), Style.NOTE)]
        return _failed(event)

    def _tool(self, event: ToolCallEvent) -> Entry:
        known = self.tools.get(event.id)
        if event.update and known is not None:
            event = replace(
                known,
                title=event.title or known.title,
                kind=event.kind or known.kind,
                status=event.status or known.status,
                content=event.content or known.content,
            )
        self.tools[event.id] = event
        status = STATUS.get(event.status, event.status or "waiting")
        text = f"Tool call: {event.title or event.id}  [{event.kind or 'other'} · {status}]"
        if event.content:
            text += "\n" + "\n".join("    " + line for line in _clip_lines(event.content).splitlines())
        style = Style.FAILED if event.status == "failed" else Style.TOOL
        return Entry(text, style, place=f"tool:{event.id}")


def _plan(event: PlanUpdated, turn: int) -> Entry:
    marks = {"completed": "[x]", "in_progress": "[>]"}
    lines = [f"  {marks.get(e.status, '[ ]')} {e.content}" for e in event.entries]
    return Entry("\n".join(["Plan:", *lines]), Style.PLAN, place=f"plan:{turn}")


def _permission(event: PermissionDecided) -> Entry:
    if event.decision == "cancelled":  # the agent ended with the question open: nothing answered
        text = f"Permission: {event.title} [{event.kind or 'other'}] — refused: {event.reason}"
        return Entry(text, Style.REFUSED)
    how = DECISIONS.get(event.decision, event.decision)
    always = " — always, for this session" if event.sticky else ""
    # When the user decided, the policy's reason ("the user decides") says nothing new.
    why = "" if event.verdict == "ask" else f" ({event.reason})"
    answered = event.answer.replace("_", " ")
    text = f"Permission: {event.title} [{event.kind or 'other'}] — {how}{always}{why}; answered “{answered}”"
    return Entry(text, Style.ALLOWED if event.decision in ALLOWED_WORDS else Style.REFUSED)


def _file(event: FileAccess) -> Entry:
    op, path = event.operation, event.path
    why = event.message or event.outcome
    if event.outcome == "ok":
        done = {"read": f"Read {path}", "write": f"Wrote {path} (you confirmed)"}.get(op, f"{op} {path}")
        text = f"Left {path} as it was: no change" if event.decision == "unchanged" else done
        return Entry(text, Style.ALLOWED)
    if event.decision == "refused":
        text = f"Helm refused to {op} {path}: {why}"
    elif event.decision in ("declined", "expired"):
        text = f"Not written: {path} — {DECISIONS[event.decision]}"
    elif event.decision == "cancelled":  # the agent ended with the question open
        text = f"Not written: {path} — refused: {why}"
    else:
        text = f"Could not {op} {path}: {why}"
    return Entry(text, Style.REFUSED)


def _started(event: SessionStarted) -> list[Entry]:
    verb = "continued" if event.resumed else "started"
    text = f"Session {verb}: {event.agent} in {event.workspace} (session {event.session_id})"
    entries = [Entry(text, Style.NOTE)]
    if event.note:
        entries.append(Entry(event.note[:1].upper() + event.note[1:] + ".", Style.NOTE))
    return entries


def _failed(event: AgentFailed) -> list[Entry]:
    code = "" if event.exit_code is None else f" (exit code {event.exit_code})"
    entries = [Entry(f"The agent failed: {event.message}{code}", Style.FAILED)]
    if event.stderr_tail:
        tail = event.stderr_tail.rstrip("\n")
        entries.append(Entry(f"What it wrote to stderr (last lines):\n{tail}", Style.DETAIL))
    return entries
