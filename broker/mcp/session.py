"""One live MCP session to one server: started lazily, reused, restarted after it dies.

A runner task owns the transport and the SDK ``ClientSession`` (both are anyio task groups
that must be entered and left in one task); calls from other tasks send requests through it.
In ``initialize`` Helm says it hosts MCP Apps (the ``io.modelcontextprotocol/ui`` extension), so
a server that offers its UIs only to hosts that say so offers them to Helm.

Every request is bounded: an oversized answer ends it with ``too_large`` (the transport answers
it with Helm's own error, ``TOO_LARGE``), a dead session with ``unavailable``, the clock with
``timeout``. A timed-out request is cancelled by the SDK, which tells the server so; Helm then
pings the server, and a stdio child that does not answer within a grace period ignored the
cancellation and is killed with its whole process group. Helm reads no private part of the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TypeVar

import anyio
from mcp import MCPError, types
from mcp.client import ClientSession, IncomingMessage
from pydantic import BaseModel, ValidationError

from broker.apps.meta import EXTENSION_ID, UI_MIME
from broker.errors import CallError, ErrorCode
from broker.mcp import pins
from broker.mcp.stdio import TOO_LARGE, UNREADABLE, Child, ChildFailed, OverflowHook, ReadStream, WriteStream

log = logging.getLogger("helm.mcp")

T = TypeVar("T", bound=BaseModel)

Opener = Callable[[OverflowHook], AbstractAsyncContextManager[tuple[ReadStream, WriteStream, Child | None]]]
"""Opens the transport; yields the SDK's streams and the stdio child (None over HTTP)."""

CLIENT_INFO = types.Implementation(name="Helm", version="1")


def extensions() -> dict[str, dict[str, object]]:
    """The extensions Helm supports, as ``initialize`` advertises them: MCP Apps, with the one
    UI type it renders."""
    return {EXTENSION_ID: {"mimeTypes": [UI_MIME]}}


MAX_TOOL_PAGES = 20
MAX_TOOLS = 50_000
"""The most tools Helm takes from one server: a listing with more, or with more than
``MAX_TOOL_PAGES`` pages, is refused (``too_large``)."""


@dataclass(frozen=True)
class McpLimits:
    """The contract's limits for MCP, plus Helm's own grace periods (seconds, bytes)."""

    call_timeout: float = 30.0
    start_timeout: float = 30.0
    max_bytes: int = 1024 * 1024
    cancel_grace: float = 2.0
    tools_ttl: float = 10.0
    """How long a listed tool definition is trusted before Helm lists the tools again (the
    server's list_changed notification makes it sooner)."""
    max_listing: int = 16 * 1024 * 1024
    """The bound of one page of a tool listing: a catalogue of tens of thousands of tools (a
    call's result keeps its own bound, ``max_bytes``)."""
    list_changed_interval: float = 5.0
    """After a list_changed notification Helm lists the tools again at the next call, but at
    most once in this many seconds however often the server sends it (a storm of them costs
    one listing per interval, not one per call)."""

    @property
    def max_message(self) -> int:
        # A JSON-RPC message carries its result plus a little framing; escaping can grow text,
        # so the transport allows some slack and a call's result is measured exactly afterwards.
        return max(self.max_bytes, self.max_listing) + 64 * 1024


class ServerSession:
    """The session of one server in one workspace (``label`` names it in messages)."""

    def __init__(
        self,
        label: str,
        opener: Opener,
        limits: McpLimits,
        *,
        start_hint: str = "",
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.label = label
        self.start_hint = start_hint
        self.secrets = secrets
        """Every form of the secrets Helm gives this server (scrubbed from its answers)."""
        self._opener = opener
        self.limits = limits
        self._task: asyncio.Task[None] | None = None
        self._session: ClientSession | None = None
        self._child: Child | None = None
        self._failure = ""  # why the child could not be started (``ChildFailed``)
        self._stderr = ""  # the end of its stderr when the session ended
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._start_lock = asyncio.Lock()
        self._unattributed_overflow = False
        self._broken = False
        self._tools: dict[str, types.Tool] | None = None
        self._tools_at = 0.0
        self._tools_refused: CallError | None = None
        self._tools_changed = False
        self._relisted_at = -float("inf")
        self._listing = asyncio.Lock()
        self._digests: tuple[dict[str, types.Tool], dict[str, str]] = ({}, {})

    # -- lifecycle -----------------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        try:
            async with self._opener(self._on_overflow) as (read, write, child):
                self._child = child
                async with ClientSession(
                    read,
                    write,
                    message_handler=self._on_message,
                    client_info=CLIENT_INFO,
                    extensions=extensions(),
                ) as session:
                    await session.initialize()
                    self._session = session
                    self._ready.set()
                    await self._closing.wait()
        except ChildFailed as exc:
            self._failure = str(exc)
        except Exception:
            log.debug("MCP session %s ended with an error", self.label, exc_info=True)
        finally:
            if self._child is not None:
                self._stderr = self._child.stderr.text()
            self._session = None  # the SDK ended each request in flight with CONNECTION_CLOSED
            self._ready.set()

    async def start(self) -> ClientSession:
        """The running session, starting it (again) if needed; ``unavailable`` if it cannot."""
        session = self._session
        if session is not None and not self._broken and self.alive and not self._start_lock.locked():
            return session  # nearly every call: nothing to start, no lock to take
        async with self._start_lock:
            if not self.alive or self._session is None or self._broken:
                await self._reap()
                self._ready, self._closing = asyncio.Event(), asyncio.Event()
                self._unattributed_overflow = self._broken = self._tools_changed = False
                self._failure, self._stderr, self._child = "", "", None
                self._tools = self._tools_refused = None
                self._task = asyncio.create_task(self._run(), name=f"mcp-session-{self.label}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._ready.wait(), self.limits.start_timeout)
            session = self._session
        if session is None:
            await self._reap()
            raise self._start_error()
        return session

    def _start_error(self) -> CallError:
        """Why the server did not start, in words the extension may see (its exit code, or no
        answer); which program was missing and the end of its stderr go to the user only
        (``CallError.detail``, shown by ``helm mcp tools`` and the Test button)."""
        child = self._child
        code = None if child is None else child.process.returncode
        if self._failure:
            why = ": its program could not be run"
        elif code is not None:
            why = f": it exited with code {code} before answering"
        else:
            why = f": it did not answer within {self.limits.start_timeout:g} s"
        tail = self._stderr.rstrip("\n")
        detail = "\n".join(
            part for part in (self._failure, tail and f"--- its stderr (last lines) ---\n{tail}") if part
        )
        message = f"{self.label} could not be started{why}{self.start_hint}"
        return CallError(ErrorCode.UNAVAILABLE, message, detail=detail)

    async def _reap(self) -> None:
        """End the runner task (if any) and wait for it: nothing is left running."""
        task, self._task = self._task, None
        if task is None:
            return
        self._closing.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), self.limits.cancel_grace + 5.0)
        except TimeoutError:
            if self._child is not None:
                self._child.kill_group()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def aclose(self) -> None:
        await self._reap()

    # -- events from the transport and the server ----------------------------------------
    def _on_overflow(self) -> None:
        self._unattributed_overflow = True

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._tools_changed = True

    # -- requests ------------------------------------------------------------------------
    async def request(self, request: types.ClientRequest, result_type: type[T]) -> T:
        """Send one request and wait for its result within the call's limits."""
        session = await self.start()
        failure: MCPError | None = None
        with anyio.move_on_after(self.limits.call_timeout):
            try:
                return await session.send_request(request, result_type)
            except MCPError as exc:
                failure = exc
            except ValidationError as exc:
                raise CallError(
                    ErrorCode.UNAVAILABLE, f"{self.label} sent an answer that is not valid MCP"
                ) from exc
        if failure is None:  # the clock ran out; the SDK told the server to cancel
            await self._after_timeout(session)
            raise CallError(
                ErrorCode.TIMEOUT, f"{self.label} did not answer within {self.limits.call_timeout:g} s"
            )
        raise self._failed(failure)

    def _failed(self, failure: MCPError) -> CallError:
        """The contract's error for a request the SDK ended with ``failure``."""
        if failure.code == TOO_LARGE:
            return _ended(self.label, ErrorCode.TOO_LARGE, self._child)
        if failure.code == types.CONNECTION_CLOSED:
            self._broken = True
            reason = ErrorCode.TOO_LARGE if self._unattributed_overflow else ErrorCode.UNAVAILABLE
            return _ended(self.label, reason, self._child)
        if failure.code == UNREADABLE:
            return CallError(
                ErrorCode.UNAVAILABLE,
                f"{self.label} sent an answer Helm cannot read (not JSON-RPC, or nested too deeply)",
            )
        return CallError(ErrorCode.UNAVAILABLE, f"{self.label} refused the request (MCP error)")

    async def _after_timeout(self, session: ClientSession) -> None:
        """A stdio child that cannot even answer a ping after a cancellation is killed."""
        answered = False
        with anyio.move_on_after(self.limits.cancel_grace):
            try:
                await session.send_ping()
            except MCPError:
                pass
            except ValidationError:
                answered = True  # an answer, if not a valid one
            else:
                answered = True
        if not answered:
            log.info("%s ignored a cancellation; ending it", self.label)
            if self._child is not None:
                self._child.kill_group()
            await self._reap()

    async def tools(self) -> dict[str, types.Tool]:
        """The server's tools by name: listed again after the TTL, or at the next call after a
        list_changed notification (at most once per ``list_changed_interval``). One listing at
        a time: calls that need it meanwhile wait for it and share it."""
        if not self._listing.locked() and self._listed_is_current():  # nearly every call
            return self._current_tools()
        async with self._listing:
            if self._listed_is_current():
                return self._current_tools()
            now = time.monotonic()
            if self._tools_changed and self._tools is not None:
                self._relisted_at = now
            self._tools_changed = False
            try:
                self._tools, self._tools_refused = await self._list_tools(), None
            except CallError as err:
                if err.code is not ErrorCode.TOO_LARGE:
                    raise
                self._tools, self._tools_refused = {}, err  # refused again until the TTL ends
            self._tools_at = now
            if self._tools_refused is not None:
                raise self._tools_refused
            return self._tools

    def _current_tools(self) -> dict[str, types.Tool]:
        if self._tools_refused is not None:
            raise self._tools_refused
        assert self._tools is not None
        return self._tools

    def _listed_is_current(self) -> bool:
        if self._tools is None or not self.alive:
            return False
        now = time.monotonic()
        if now - self._tools_at >= self.limits.tools_ttl:
            return False
        return not self._tools_changed or now - self._relisted_at < self.limits.list_changed_interval

    async def _list_tools(self) -> dict[str, types.Tool]:
        tools: dict[str, types.Tool] = {}
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                page = await self.request(types.ListToolsRequest(params=params), types.ListToolsResult)
            except CallError as exc:
                if exc.code is not ErrorCode.TOO_LARGE:
                    raise
                mib = self.limits.max_listing // (1024 * 1024)
                raise CallError(
                    ErrorCode.TOO_LARGE, f"{self.label} sent a tool list larger than {mib} MiB"
                ) from exc
            tools.update((t.name, t) for t in page.tools)
            if len(tools) > MAX_TOOLS:
                raise CallError(ErrorCode.TOO_LARGE, f"{self.label} offers more than {MAX_TOOLS} tools")
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise CallError(
            ErrorCode.TOO_LARGE, f"{self.label} lists its tools in more than {MAX_TOOL_PAGES} pages"
        )

    def tool_digest(self, tools: dict[str, types.Tool], name: str) -> str | None:
        """The pinned digest of tool ``name`` in ``tools`` (a listing ``tools()`` returned),
        computed once per listing rather than once per call; None when it is not offered."""
        tool = tools.get(name)
        if tool is None:
            return None
        listing, digests = self._digests
        if listing is not tools:
            digests = {}
            self._digests = (tools, digests)
        found = digests.get(name)
        if found is None:
            found = digests[name] = pins.tool_digest(tool)
        return found

    async def call_tool(self, name: str, arguments: dict[str, object]) -> types.CallToolResult:
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        return await self.request(request, types.CallToolResult)


def _ended(label: str, reason: ErrorCode, child: Child | None) -> CallError:
    if reason is ErrorCode.TOO_LARGE:
        return CallError(ErrorCode.TOO_LARGE, f"{label} sent a result larger than 1 MiB")
    if child is None:  # a server at a URL: Helm can only connect to it again
        return CallError(
            ErrorCode.UNAVAILABLE,
            f"{label} closed the connection or cannot be reached; Helm connects again on the next call",
        )
    return CallError(ErrorCode.UNAVAILABLE, f"{label} stopped; Helm starts it again on the next call")
