"""The running kinds of one broker, loaded off the event loop, and the MCP sessions they share.

A kind's adapter and its libraries (the MCP SDK takes a third of a second) are imported the
first time the kind is needed, in a worker thread the caller awaits: the loop, and the window
it draws, go on meanwhile, and every call that needs the kind then shares the one import. A kind
that cannot be imported, or not within ``LOAD_SECONDS``, is ``unavailable`` and tried again next
time. ``Broker.kind``, ``kind_now``, ``preload`` and ``mcp_servers`` are this module's surface.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from broker.audit import AuditLog
from broker.credentials import CredentialStore
from broker.errors import CallError, ErrorCode
from broker.kinds import KINDS
from broker.kinds.base import Kind, KindEnv
from broker.kinds.spec import KindSpec
from broker.settings import Home

if TYPE_CHECKING:
    from broker.mcp.servers import McpServers

log = logging.getLogger("helm.broker")

LOAD_SECONDS = 60.0
"""How long a call waits for its kind's libraries to import (a worker thread cannot be stopped)."""
CLOSE_SECONDS = 5.0


class RunningKinds:
    """One running part per kind, made on first use from the broker's ``KindEnv``."""

    def __init__(
        self, home: Home, credentials: CredentialStore, audit: AuditLog, given: Mapping[str, Kind[Any]]
    ) -> None:
        self.env = KindEnv(home, credentials, audit, self._shared_mcp_servers)
        self._kinds: dict[str, Any] = dict(given)
        self._loads: dict[str, asyncio.Task[Any]] = {}
        self._mcp_servers: McpServers | None = None

    async def kind[K](self, spec: KindSpec[Any, Any, K]) -> K:
        running = self._kinds.get(spec.name)
        if running is None:
            factory = await self._loaded(spec)
            running = self._kinds.get(spec.name)  # another call may have made it meanwhile
            if running is None:
                running = self._kinds[spec.name] = factory(self.env)
        found: K = running
        return found

    def made(self, name: str) -> Kind[Any] | None:
        """The running part of kind ``name`` if it was made already (every call after its
        kind's first), without awaiting anything; None when it is still to be made."""
        made: Kind[Any] | None = self._kinds.get(name)
        return made

    def kind_now[K](self, spec: KindSpec[Any, Any, K]) -> K:
        running = self._kinds.get(spec.name)
        if running is None:
            running = self._kinds[spec.name] = spec.load()(self.env)
        found: K = running
        return found

    async def preload(self, kinds: Iterable[str]) -> None:
        specs = [KINDS[name] for name in set(kinds) if name in KINDS]
        await asyncio.gather(*(self.kind(spec) for spec in specs), return_exceptions=True)

    async def _loaded(self, spec: KindSpec[Any, Any, Any]) -> Any:
        load = self._loads.get(spec.name)
        if load is None or (load.done() and load.exception() is not None):
            load = self._loads[spec.name] = asyncio.get_running_loop().create_task(
                asyncio.to_thread(spec.load), name=f"load-kind-{spec.name}"
            )
        try:
            return await asyncio.wait_for(asyncio.shield(load), LOAD_SECONDS)
        except TimeoutError:
            raise CallError(ErrorCode.UNAVAILABLE, f"the {spec.name} kind did not load in time") from None
        except Exception as exc:
            log.exception("the %s kind could not be imported", spec.name)
            raise CallError(ErrorCode.UNAVAILABLE, f"the {spec.name} kind could not be loaded") from exc

    async def mcp_servers(self) -> McpServers:
        if self._mcp_servers is None:
            await asyncio.to_thread(importlib.import_module, "broker.mcp.servers")
        return self._shared_mcp_servers()

    def _shared_mcp_servers(self) -> McpServers:
        if self._mcp_servers is None:
            from broker.mcp.servers import McpServers

            self._mcp_servers = McpServers(self.env.home, self.env.credentials)
        return self._mcp_servers

    async def aclose(self) -> None:
        loading = [load for load in self._loads.values() if not load.done()]
        if loading:  # imports still running in their threads: give them a moment
            await asyncio.wait(loading, timeout=CLOSE_SECONDS)
        kinds, self._kinds = self._kinds, {}
        for name, kind in kinds.items():
            try:
                await kind.aclose()
            except Exception:
                log.exception("closing the %s kind failed", name)
        servers, self._mcp_servers = self._mcp_servers, None
        if servers is not None:
            await servers.aclose()
