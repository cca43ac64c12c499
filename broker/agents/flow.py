"""Back-pressure: what an agent can make Helm hold at once is bounded.

The SDK starts one task per message it receives. If Helm read an agent's output as fast as
the agent writes it, an agent flooding ``session/update`` would make Helm queue events (and
tasks) without bound while the consumer — a terminal, a window — shows them. So the transport
asks ``Flow.room()`` before it reads the next message: it waits while ``max_events`` events are
queued or being made, or ``max_requests`` of the agent's requests are being served. The agent
then blocks on its own full pipe; nothing is dropped and Helm's memory stays bounded.
"""

from __future__ import annotations

import asyncio
from collections import deque

from broker.agents.events import AgentEvent

MAX_EVENTS = 128
MAX_REQUESTS = 8


class Flow:
    def __init__(self, max_events: int = MAX_EVENTS, max_requests: int = MAX_REQUESTS) -> None:
        self.max_events = max_events
        self.max_requests = max_requests
        self._events: deque[AgentEvent] = deque()
        self._updates = 0  # session/update messages read but not yet turned into events
        self._requests: set[object] = set()  # ids of the agent's requests being served
        self._changed = asyncio.Event()
        self.high_water = 0
        """The most events ever queued at once (benchmarks and tests read it)."""

    def _signal(self) -> None:
        self._changed.set()

    def _full(self) -> bool:
        return (
            len(self._events) + self._updates >= self.max_events or len(self._requests) >= self.max_requests
        )

    async def room(self) -> None:
        """Wait until Helm may read one more message from the agent."""
        while self._full():
            self._changed.clear()
            await self._changed.wait()

    def update_started(self) -> None:
        self._updates += 1

    def update_done(self) -> None:
        self._updates = max(0, self._updates - 1)
        self._signal()

    def request_started(self, request_id: object) -> None:
        self._requests.add(request_id)

    def request_done(self, request_id: object) -> None:
        self._requests.discard(request_id)
        self._signal()

    def push(self, event: AgentEvent) -> None:
        self._events.append(event)
        self.high_water = max(self.high_water, len(self._events))
        self._signal()

    def pop(self) -> AgentEvent | None:
        """The oldest queued event, or None."""
        if not self._events:
            return None
        event = self._events.popleft()
        self._signal()
        return event

    async def next(self, seconds: float) -> AgentEvent | None:
        """The next event, waiting up to ``seconds`` (None when none came)."""
        try:
            async with asyncio.timeout(seconds):
                while not self._events:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            return None
        return self.pop()
