"""Call admission: 60 calls per minute per extension instance, and a cap on calls in flight.

An instance is one running frame of one extension in one workspace: the key is the whole
``(workspace, extension, instance)`` triple (``instance_key``), so an extension with the same id
in another workspace, or another frame of the same extension, never spends this one's budget.
Decisions are data: ``admit`` returns an ``Admission`` that either lets the call in (and must
be released when it ends) or says when to retry.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from broker.context import CallContext

CALLS_PER_MINUTE = 60
WINDOW_SECONDS = 60.0
MAX_IN_FLIGHT_PER_INSTANCE = 16
MAX_IN_FLIGHT_TOTAL = 256


InstanceKey = tuple[str, str, str]
"""(workspace, extension, frame instance)."""


def instance_key(ctx: CallContext) -> InstanceKey:
    """What the rate limit counts a call against: the calling frame, in its workspace."""
    return (ctx.workspace, ctx.extension, ctx.instance)


@dataclass(frozen=True, slots=True)
class Admission:
    admitted: bool
    retry_after: float = 0.0
    reason: str = ""


class CallAdmission:
    """Sliding-window rate limit per instance plus in-flight caps (per instance and total)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        per_minute: int = CALLS_PER_MINUTE,
        in_flight_per_instance: int = MAX_IN_FLIGHT_PER_INSTANCE,
        in_flight_total: int = MAX_IN_FLIGHT_TOTAL,
    ) -> None:
        self._clock = clock
        self._per_minute = per_minute
        self._cap_instance = in_flight_per_instance
        self._cap_total = in_flight_total
        self._history: dict[InstanceKey, deque[float]] = {}
        self._in_flight: dict[InstanceKey, int] = {}
        self._total = 0

    def admit(self, instance: InstanceKey) -> Admission:
        now = self._clock()
        history = self._history.get(instance)
        if history is None:
            history = self._history[instance] = deque()
        while history and now - history[0] >= WINDOW_SECONDS:
            history.popleft()
        if len(history) >= self._per_minute:
            wait = WINDOW_SECONDS - (now - history[0])
            return Admission(
                False,
                round(max(wait, 0.001), 3),
                f"rate limit of {self._per_minute} calls per minute reached",
            )
        if self._in_flight.get(instance, 0) >= self._cap_instance or self._total >= self._cap_total:
            return Admission(False, 1.0, "too many calls in flight; wait for some to finish")
        history.append(now)
        self._in_flight[instance] = self._in_flight.get(instance, 0) + 1
        self._total += 1
        return Admission(True)

    def release(self, instance: InstanceKey) -> None:
        count = self._in_flight.get(instance, 0)
        if count <= 1:
            self._in_flight.pop(instance, None)
        else:
            self._in_flight[instance] = count - 1
        self._total = max(0, self._total - 1)
