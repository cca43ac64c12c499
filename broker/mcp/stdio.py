"""A stdio transport for MCP with a bounded line reader and a child in its own process group.

The SDK's own stdio transport buffers a line of any length. A server that sends 1 GiB on one
line would hold 1 GiB here; this reader keeps at most ``max_message`` bytes of a line and drops
the rest as it streams in. The request that line answered is answered by Helm itself, with an
error of code ``TOO_LARGE`` (the SDK's session ends that request with it); a line that does not
say which request it answers ends the session, and ``on_overflow`` is told first. The child
runs in a new session (its own process group) so a timeout can kill it together with everything
it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage

from broker.childtail import StderrTail

log = logging.getLogger("helm.mcp")

OverflowHook = Callable[[], None]
"""Told that an oversized message said not which request it answers: the session ends."""

_CHUNK = 64 * 1024
_EDGE = 256  # bytes of an oversized line kept to find which request it answers
_HEAD_ID = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,64}")')
_TAIL_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,64}")\s*\}\s*$')
_EXIT_GRACE = 2.0
_PARSE_ON_LOOP = 64 * 1024  # longer lines are parsed in a worker thread
UNREADABLE = -32099
"""The JSON-RPC error code of the answer Helm gives itself for a request whose answer it could
not read (not JSON-RPC, or nested deeper than the parser goes): the request ends at once."""
TOO_LARGE = -32098
"""The JSON-RPC error code of the answer Helm gives itself for a request whose answer was larger
than the transport's bound (the part past the bound was never kept)."""


class ChildFailed(Exception):
    """The stdio child could not be started (missing program, permission); the message says
    which, in words for the user, naming the program but no path."""


INSTALL_HINTS = {
    "uvx": "uv (pipx install uv, or pip install uv)",
    "uv": "uv (pipx install uv, or pip install uv)",
    "npx": "Node.js with npm",
    "node": "Node.js",
    "npm": "Node.js with npm",
    "docker": "Docker",
    "python3": "Python 3",
    "python": "Python 3",
    "deno": "Deno",
    "bunx": "Bun",
}
"""What to install for the launchers most MCP servers are started with."""


def start_failure(command: Sequence[str], exc: BaseException) -> str:
    """Why ``command`` did not start, naming its program (never its path) and what to install."""
    program = os.path.basename(command[0]) if command else "the program"
    if isinstance(exc, FileNotFoundError):
        what = INSTALL_HINTS.get(program)
        return f"the program {program!r} was not found" + (f"; install {what}" if what else "")
    if isinstance(exc, PermissionError):
        return f"the program {program!r} cannot be run (permission denied)"
    return f"the program {program!r} could not be started"


@dataclass
class Child:
    """The running child; its pid is also its process group id. ``stderr`` keeps the end of
    what it wrote there, its secrets removed (``broker.childtail``)."""

    process: asyncio.subprocess.Process
    stderr: StderrTail = field(default_factory=StderrTail)

    def kill_group(self) -> None:
        """SIGKILL the whole process group (the child ignored cancellation or Helm is closing)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)


class ReadStream(Protocol):
    """What the SDK's session reads the server's messages from (Helm's stdio stream and the
    SDK's own HTTP stream both are one)."""

    async def receive(self) -> SessionMessage | Exception: ...
    async def aclose(self) -> None: ...
    def __aiter__(self) -> ReadStream: ...
    async def __anext__(self) -> SessionMessage | Exception: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None: ...


class WriteStream(Protocol):
    """What the SDK's session writes its messages to."""

    async def send(self, item: SessionMessage, /) -> None: ...
    async def aclose(self) -> None: ...
    async def __aenter__(self) -> Self: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None: ...


def _request_id(head: bytes, tail: bytes) -> types.RequestId | None:
    match = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
    if match is None:
        return None
    raw = match.group(1).decode("ascii", "replace")
    return raw[1:-1] if raw.startswith('"') else int(raw)


class _LineReader:
    """Splits the child's stdout into lines, keeping at most ``limit`` bytes of a line."""

    def __init__(self, limit: int, on_overflow: OverflowHook) -> None:
        self.limit = limit
        self.on_overflow = on_overflow
        self.buf = bytearray()
        self.over = False
        self.head = b""
        self.tail = b""

    def feed(self, chunk: bytes) -> list[bytes | SessionMessage | None]:
        """Lines completed by ``chunk``; an oversized line is Helm's own answer to its request,
        or ``None`` when its request is unknown (the session must end)."""
        out: list[bytes | SessionMessage | None] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start : nl if nl >= 0 else len(chunk)]
            if self.over:
                self.tail = (self.tail + piece)[-_EDGE:]
            else:
                self.buf += piece
                if len(self.buf) > self.limit:
                    self.over, self.head, self.tail = True, bytes(self.buf[:_EDGE]), bytes(self.buf[-_EDGE:])
                    self.buf = bytearray()
            if nl < 0:
                return out
            out.extend(self._finish_line())
            start = nl + 1

    def _finish_line(self) -> list[bytes | SessionMessage | None]:
        if self.over:
            self.over = False
            rid = _request_id(self.head, self.tail)
            if rid is None:
                self.on_overflow()
                return [None]
            return [answer(rid, TOO_LARGE, "the server's answer was larger than Helm's bound")]
        line, self.buf = bytes(self.buf), bytearray()
        return [line] if line.strip() else []


def _parsed(line: bytes) -> SessionMessage | None:
    """One line as a message: a request's own error when its answer cannot be read (not
    JSON-RPC, or nested deeper than the parser goes), None when no request can be named."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:
        rid = _request_id(line[:_EDGE], line[-_EDGE:])
        if rid is None:
            log.debug("an MCP server wrote a line that is not a JSON-RPC message; ignored")
            return None
        return answer(rid, UNREADABLE, "the server's answer could not be read")


def answer(rid: types.RequestId, code: int, message: str) -> SessionMessage:
    """Helm's own error answer to request ``rid``, handed to the SDK's session as if the server
    had sent it: the session ends that request with ``MCPError`` of ``code``."""
    error = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=rid, error=error))


async def _pump_out(
    child: Child, reader: _LineReader, sink: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    stdout = child.process.stdout
    assert stdout is not None
    async with sink:
        while chunk := await stdout.read(_CHUNK):
            for line in reader.feed(chunk):
                if line is None:
                    return  # an oversized line we cannot attribute: end the session
                if isinstance(line, SessionMessage):
                    await sink.send(line)
                    continue
                # A long line (a page of a thousand tools) is parsed in a worker thread: tens
                # of milliseconds the loop, and the window it draws, do not wait for.
                if len(line) <= _PARSE_ON_LOOP:
                    message = _parsed(line)
                else:
                    message = await anyio.to_thread.run_sync(_parsed, line)
                if message is not None:
                    await sink.send(message)


async def _pump_in(child: Child, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
    stdin = child.process.stdin
    assert stdin is not None
    async with source:
        async for message in source:
            data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
            try:
                stdin.write(data.encode("utf-8") + b"\n")
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                return


async def _pump_err(child: Child) -> None:
    """Keep the end of the child's stderr (a pipe nobody reads would block the child)."""
    stderr = child.process.stderr
    assert stderr is not None
    while chunk := await stderr.read(_CHUNK):
        child.stderr.feed(chunk)


async def _stop(child: Child) -> None:
    """Close stdin, give the child a moment to exit, then end its whole group."""
    if child.process.stdin is not None:
        with contextlib.suppress(OSError):
            child.process.stdin.close()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(child.process.wait(), _EXIT_GRACE)
    if child.process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.process.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(child.process.wait(), _EXIT_GRACE)
    child.kill_group()  # whatever the child left running in its group
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(child.process.wait(), _EXIT_GRACE)


@contextlib.asynccontextmanager
async def open_stdio(
    command: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    max_message: int,
    on_overflow: OverflowHook,
    secrets: Sequence[str] = (),
) -> AsyncIterator[tuple[ReadStream, WriteStream, Child]]:
    """Start ``command`` (no shell) and yield the SDK's two streams and the child."""
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        raise ChildFailed(start_failure(command, exc)) from exc
    child = Child(process, StderrTail(secrets))
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tg:

            async def read_then_end() -> None:
                # The child closed stdout (it exited) or sent what Helm cannot attribute: end
                # the whole session, so its owner sees it stop instead of waiting forever.
                await _pump_out(child, _LineReader(max_message, on_overflow), read_writer)
                tg.cancel_scope.cancel()

            tg.start_soon(read_then_end)
            tg.start_soon(_pump_in, child, write_reader)
            tg.start_soon(_pump_err, child)
            try:
                yield read_stream, write_stream, child
            finally:
                tg.cancel_scope.cancel()
    finally:
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
        with anyio.CancelScope(shield=True):
            await _stop(child)
            with anyio.move_on_after(_EXIT_GRACE):
                await _pump_err(child)  # what it wrote before it exited, to the end
