"""Removing an agent's key from everything that leaves its process, across chunk boundaries.

Two layers, both keyed on the one secret Helm gave the agent:

* ``scrub_message`` replaces the key in every string of every JSON-RPC message the agent sends,
  before Helm acts on it: paths, titles, option names, texts, error messages. A key written
  with JSON escapes is found too (the strings are compared decoded).
* ``ChunkScrubber`` sits between the session and its consumer. Message and thought chunks are
  one text cut anywhere, so a key sent in two chunks is whole only once they are joined: the
  scrubber holds back the end of a chunk that could be the start of the key until the next
  chunk of the same stream says whether it is, and lets it go before any other event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from broker.agents.events import AgentEvent, MessageChunk, ThoughtChunk, scrubbed

KEY_REMOVED = "[key removed]"


def scrubber(secret: str | None) -> Callable[[str], str]:
    """``text`` without ``secret`` (the identity when there is no secret)."""

    def scrub(text: str) -> str:
        return text.replace(secret, KEY_REMOVED) if secret and secret in text else text

    return scrub


def scrub_message(message: dict[str, Any], scrub: Callable[[str], str]) -> dict[str, Any]:
    """``message`` (decoded JSON) with ``scrub`` applied to every string in it, keys included."""
    return {scrub(k): _scrub_value(v, scrub) for k, v in message.items()}


def _scrub_value(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(k): _scrub_value(v, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_value(v, scrub) for v in value]
    return value


def _partial(text: str, secret: str) -> int:
    """The length of the longest end of ``text`` that is a start of ``secret`` (shorter than it)."""
    for size in range(min(len(text), len(secret) - 1), 0, -1):
        if secret.startswith(text[-size:]):
            return size
    return 0


type _Chunk = MessageChunk | ThoughtChunk


class ChunkScrubber:
    """Scrubs a session's events in order, holding back what may be half a key."""

    def __init__(self, secret: str | None) -> None:
        self._secret = secret or ""
        self._scrub = scrubber(secret)
        self._held: _Chunk | None = None

    def events(self, event: AgentEvent) -> list[AgentEvent]:
        """What to pass on for ``event``: maybe a held-back text first, maybe nothing yet."""
        out: list[AgentEvent] = []
        if isinstance(event, MessageChunk | ThoughtChunk) and self._secret:
            held = self._held
            self._held = None
            if held is not None and _same_stream(held, event):
                event = replace(event, text=held.text + event.text)
            elif held is not None:
                out.append(held)
            text = self._scrub(event.text)
            keep = _partial(text, self._secret)
            if keep:
                self._held = replace(event, text=text[-keep:])
                text = text[:-keep]
            if text:
                out.append(replace(event, text=text))
            return out
        if self._held is not None:
            out.append(self._held)
            self._held = None
        out.append(scrubbed(event, self._scrub))
        return out


def _same_stream(a: _Chunk, b: _Chunk) -> bool:
    """Whether ``b`` continues the text of ``a`` (not another stream, not another message)."""
    if isinstance(a, MessageChunk) and isinstance(b, MessageChunk):
        return a.role == b.role and not b.starts_new_message(a)
    return type(a) is type(b)
