"""The live sessions of a kind: one per (workspace, server), replaced when its settings change."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from broker.mcp.httpcap import HttpState, open_http
from broker.mcp.session import McpLimits, Opener, ServerSession
from broker.mcp.stdio import Child, OverflowHook, ReadStream, WriteStream, open_stdio
from broker.settings import Workspace

log = logging.getLogger("helm.mcp")


def stdio_opener(
    command: Sequence[str], env: dict[str, str], cwd: Path, limits: McpLimits, secrets: Sequence[str] = ()
) -> Opener:
    @contextlib.asynccontextmanager
    async def opener(hook: OverflowHook) -> AsyncIterator[tuple[ReadStream, WriteStream, Child | None]]:
        async with open_stdio(command, env, cwd, limits.max_message, hook, secrets) as (read, write, child):
            yield read, write, child

    return opener


def http_opener(url: str, token: str | None, limits: McpLimits, state: HttpState) -> Opener:
    @contextlib.asynccontextmanager
    async def opener(hook: OverflowHook) -> AsyncIterator[tuple[ReadStream, WriteStream, Child | None]]:
        async with open_http(url, token, limits.max_message, state) as (read, write):
            yield read, write, None

    return opener


def working_folder(workspace: Workspace) -> Path:
    """A stdio child runs in the workspace root (or the home folder if that is gone)."""
    return workspace.root if workspace.root.is_dir() else Path.home()


class SessionPool:
    """Sessions keyed by (workspace, server); a changed fingerprint (the profile, the token,
    the command: values compared with ``==``) closes the old session and starts a new one on
    the next call."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], tuple[object, ServerSession]] = {}
        self._lock = asyncio.Lock()

    def running(self, key: tuple[str, str], fingerprint: object) -> ServerSession | None:
        """The session ``get`` would return without making one, when that is known now: none
        is being replaced or closed (the lock is free) and its fingerprint is the same. Taking
        no lock and building no ``make``, it is what nearly every call needs."""
        if self._lock.locked():
            return None
        current = self._sessions.get(key)
        return current[1] if current is not None and current[0] == fingerprint else None

    async def get(
        self, key: tuple[str, str], fingerprint: object, make: Callable[[], ServerSession]
    ) -> ServerSession:
        async with self._lock:
            current = self._sessions.get(key)
            if current is not None and current[0] == fingerprint:
                return current[1]
            if current is not None:
                await current[1].aclose()
            session = make()
            self._sessions[key] = (fingerprint, session)
            return session

    async def aclose(self) -> None:
        async with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for _, session in sessions:
            try:
                await session.aclose()
            except Exception:
                log.exception("closing %s failed", session.label)
