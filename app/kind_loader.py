"""Kinds' libraries are imported in a worker thread, never on the event loop.

The broker imports a kind's adapter on the kind's first call, on the event loop: for the MCP
SDK that is a third of a second in which the window does not repaint and no frame loads. So a
frame's call whose kind is not imported yet first waits, off the loop, while a worker thread
imports it, and then goes to the broker. Kinds import side by side: a frame of the files kind
does not wait for the MCP SDK.

At most ``MAX_IN_FLIGHT_PER_INSTANCE`` calls of one frame wait like this (the broker's own cap
on a frame's calls in flight): further calls go straight to the broker, which imports the kind
on the loop as it always did and counts them against its limits. Waiting never holds more of a
frame's calls than the broker itself would.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from broker import Broker, CallContext, Confirmer
from broker.errors import HelmError
from broker.kinds import KINDS
from broker.ratelimit import MAX_IN_FLIGHT_PER_INSTANCE, InstanceKey, instance_key

if TYPE_CHECKING:
    from ui.host.bridge import CallHandler

log = logging.getLogger(__name__)

CLOSE_SECONDS = 5.0
LOAD_SECONDS = 60.0


class KindLoader:
    """A frame's call handler (the broker's, ``handler``) with each call's kind imported in a
    worker thread first; ``broker`` says which kind a frame's connection is."""

    def __init__(self, handler: CallHandler, broker: Broker) -> None:
        self._handler = handler
        self._broker = broker
        self._loads: dict[str, asyncio.Task[None]] = {}
        self._kinds: dict[tuple[str, str, str], str | None] = {}
        self._waiting: dict[InstanceKey, int] = {}

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        kind = self._kind(ctx, connection_id)
        if kind is not None:
            load = self._load(kind)
            frame = instance_key(ctx)
            if not load.done() and self._waiting.get(frame, 0) < MAX_IN_FLIGHT_PER_INSTANCE:
                await self._wait(frame, load)
        return await self._handler.request_json(ctx, connection_id, operation, args_json, confirm)

    async def preload(self, kinds: Iterable[str]) -> None:
        """Import these kinds now, in worker threads (before something imports them on the loop)."""
        loads = [self._load(kind) for kind in set(kinds) if kind in KINDS]
        if loads:
            await asyncio.wait(loads, timeout=LOAD_SECONDS)

    def _load(self, kind: str) -> asyncio.Task[None]:
        load = self._loads.get(kind)
        if load is None:
            load = self._loads[kind] = asyncio.get_running_loop().create_task(self._import(kind))
        return load

    @staticmethod
    async def _import(kind: str) -> None:
        try:
            await asyncio.to_thread(KINDS[kind].load)
        except Exception:  # the broker imports it again on the call and reports what failed
            log.warning("the %s kind could not be imported in the background", kind, exc_info=True)

    async def _wait(self, frame: InstanceKey, load: asyncio.Task[None]) -> None:
        self._waiting[frame] = self._waiting.get(frame, 0) + 1
        try:
            await asyncio.wait([load], timeout=LOAD_SECONDS)
        finally:
            self._waiting[frame] -= 1
            if not self._waiting[frame]:
                del self._waiting[frame]

    def _kind(self, ctx: CallContext, connection_id: str) -> str | None:
        """The kind of a frame's connection as its manifest says (None: not one Helm knows,
        or no such connection, which the broker refuses)."""
        key = (ctx.workspace, ctx.extension, connection_id)
        if key not in self._kinds:
            try:
                connection = self._broker.manifest(ctx.workspace, ctx.extension).connection(connection_id)
            except HelmError:
                return None
            kind = None if connection is None else connection.kind
            self._kinds[key] = kind if kind in KINDS else None
        return self._kinds[key]

    async def aclose(self) -> None:
        """Wait a moment for imports still running (a worker thread cannot be stopped)."""
        running = [load for load in self._loads.values() if not load.done()]
        if running:
            await asyncio.wait(running, timeout=CLOSE_SECONDS)
