"""The agent's process: started without a shell in its own process group, and its pipes.

* ``AgentProcess`` starts the program with the minimal child environment and its mark
  (``broker.agents.tree``), keeps the last ~4 KB of its stderr (the key removed before anyone
  sees it), and stops it: close stdin and wait, then SIGTERM the whole group and every process
  the agent started (found by ``tree.descendants``, wherever it went) and wait, then SIGKILL
  whatever is left, so nothing the agent started outlives it. Should Helm be killed with no
  chance to do that, the kernel ends the agent itself (``broker.parentdeath``).
* ``LineTransport`` is the SDK's message transport over the child's stdin/stdout, reading at
  most ``MAX_MESSAGE`` bytes of a line and asking ``Flow`` for room before each message. It
  watches the process itself, not only its stdout: once the agent has exited, what it wrote
  before is read and the stream ends, even while a process it started holds the pipe open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp import schema
from pydantic import ValidationError

from broker.agents import tree
from broker.agents.flow import Flow
from broker.agents.scrub import scrub_message, scrubber
from broker.childtail import StderrTail
from broker.errors import AgentError
from broker.parentdeath import ends_with_helm

log = logging.getLogger("helm.agents")

MAX_MESSAGE = 4 * 1024 * 1024
_CHUNK = 64 * 1024
AFTER_EXIT = 0.5
"""Once the agent has exited, how long what it wrote before may still take to be read."""
_POLL = 0.05


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The standard protocol, and a future done when the process exits: ``Process.wait``
    waits for its pipes to close too, which a process the agent started may keep open."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_CHUNK, loop=loop)
        self.exit: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exit.done():
            self.exit.set_result(None)


class AgentProcess:
    """A running agent; its pid is also its process group id."""

    def __init__(
        self, process: asyncio.subprocess.Process, exited: asyncio.Future[None], secret: str | None, mark: str
    ) -> None:
        self.process = process
        self.mark = mark
        self.stderr = StderrTail((secret,) if secret else (), mask="[key removed]")
        self._secret = secret
        self._scrub = scrubber(secret)
        self._drain = asyncio.create_task(self._read_stderr(), name="helm.agents.stderr")
        self.exited = exited
        """Done when the agent's process has exited (whoever holds its pipes)."""

    @classmethod
    async def start(
        cls, command: Sequence[str], env: dict[str, str], cwd: Path, secret: str | None
    ) -> AgentProcess:
        mark = tree.new_mark()
        loop = asyncio.get_running_loop()
        protocol = _Protocol(loop)
        try:
            transport, _ = await loop.subprocess_exec(
                lambda: protocol,
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**env, tree.MARK_VARIABLE: mark},
                cwd=cwd,
                start_new_session=True,
                preexec_fn=ends_with_helm(),
            )
        except (OSError, ValueError) as exc:
            raise AgentError(f"the agent {command[0]!r} could not be started ({type(exc).__name__})") from exc
        return cls(asyncio.subprocess.Process(transport, protocol, loop), protocol.exit, secret, mark)

    @property
    def pid(self) -> int:
        return self.process.pid

    async def _read_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        while chunk := await stderr.read(_CHUNK):
            self.stderr.feed(chunk)

    def scrub(self, text: str) -> str:
        """``text`` (from the agent) without its key."""
        return self._scrub(text)

    @property
    def has_secret(self) -> bool:
        return bool(self._secret)

    def failure(self, message: str) -> AgentError:
        """An error naming what went wrong, with the exit code and the stderr tail."""
        return AgentError(message, exit_code=self.process.returncode, stderr_tail=self.stderr.text())

    async def wait_exit(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the agent to exit (and its stderr to be read)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.exited), seconds)
            await asyncio.wait_for(asyncio.shield(self._drain), seconds)
        return self.process.returncode is not None

    async def _descendants(self) -> set[int]:
        """What the agent started and is still running (``/proc`` is read off the loop)."""
        return await asyncio.to_thread(tree.descendants, self.process.pid, self.mark)

    async def signal_all(self, sig: signal.Signals) -> bool:
        """Send ``sig`` to the agent's group and to every process it started, wherever it went;
        whether anything was left to signal."""
        left = await self._descendants()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        return bool(left) or self.process.returncode is None

    async def _gone(self, seconds: float) -> None:
        """Wait up to ``seconds`` until the agent has exited and nothing it started is left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while loop.time() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.exited), max(deadline - loop.time(), 0))
            if not await self._descendants():
                return
            await asyncio.sleep(_POLL)

    async def terminate(self, grace: float) -> None:
        """SIGTERM the group and everything the agent started, wait ``grace``, then SIGKILL
        whatever is left."""
        if await self.signal_all(signal.SIGTERM):
            await self._gone(grace)
        await self.signal_all(signal.SIGKILL)
        await self.wait_exit(grace)
        self._drain.cancel()

    async def close(self, grace: float) -> None:
        """Close stdin and give the agent ``grace`` to exit, then ``terminate``."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        with contextlib.suppress(TimeoutError):  # not its stderr: a process it started may hold it
            await asyncio.wait_for(asyncio.shield(self.exited), grace)
        await self.terminate(grace)
        # Read stdout to its end, so every pipe of the process is closed before the loop is.
        stdout = self.process.stdout
        if stdout is not None:
            with contextlib.suppress(TimeoutError, OSError, RuntimeError):
                await asyncio.wait_for(stdout.read(), grace)
        with contextlib.suppress(TimeoutError):  # and the transport is done with the process
            await asyncio.wait_for(self.process.wait(), grace)


class LineTransport:
    """Newline-delimited JSON-RPC over the agent's pipes, bounded (the SDK's ``Transport``)."""

    def __init__(self, agent: AgentProcess, flow: Flow, max_message: int = MAX_MESSAGE) -> None:
        assert agent.process.stdin is not None
        assert agent.process.stdout is not None
        self._stdin = agent.process.stdin
        self._scrub = agent.scrub if agent.has_secret else None
        self._stdout = agent.process.stdout
        self._exited = agent.exited
        self._until: float | None = None
        """Once the agent has exited: until when what it wrote before is still read."""
        self._flow = flow
        self._max = max_message
        self._buf = bytearray()
        self.broken: str | None = None
        """Why Helm stopped reading the agent (it broke the protocol), or None."""

    async def send(self, message: dict[str, Any]) -> None:
        response = "method" not in message and "id" in message
        if response:
            self._flow.request_done(message["id"])  # Helm's response to one of the agent's requests
        try:
            self._stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            await self._stdin.drain()
        except ConnectionError:
            if not response:
                raise
            # An answer to an agent that has ended (a question it left open): nobody to tell.

    async def receive(self) -> dict[str, Any] | None:
        while True:
            await self._flow.room()
            line = await self._read_line()
            if line is None:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                log.debug("an agent wrote a line that is not JSON; ignored")
                continue
            if not isinstance(message, dict):
                continue
            if self._scrub is not None:  # the key leaves the agent's process in no string
                message = scrub_message(message, self._scrub)
            counted = self._counted(message)
            if counted is not None:
                return counted

    def _counted(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """``message``, counted by ``Flow``; None for an invalid ``session/update`` (to ignore)."""
        if "method" in message and "id" in message:
            self._flow.request_started(message["id"])
        elif message.get("method") == "session/update":
            # Only a valid update reaches Helm's handler, which marks it done; an invalid
            # one would leave the count up for good.
            try:
                schema.SessionNotification.model_validate(message.get("params"))
            except ValidationError:
                log.debug("an agent sent a malformed session/update; ignored")
                return None
            self._flow.update_started()
        return message

    async def _read_line(self) -> bytes | None:
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                if line.strip():
                    return line
                continue
            if len(self._buf) > self._max:
                self.broken = f"the agent sent a message larger than {self._max // (1024 * 1024)} MiB"
                return None
            chunk = await self._read_chunk()
            if not chunk:
                return None
            self._buf += chunk

    async def _read_chunk(self) -> bytes:
        """The next bytes of stdout; b"" at its end, or shortly after the agent has exited."""
        loop = asyncio.get_running_loop()
        read: asyncio.Future[Any] = asyncio.ensure_future(self._stdout.read(_CHUNK))
        try:
            if self._until is None:
                await asyncio.wait((read, self._exited), return_when=asyncio.FIRST_COMPLETED)
                if read.done():
                    got: bytes = read.result()
                    return got
                self._until = loop.time() + AFTER_EXIT
            with contextlib.suppress(TimeoutError):
                chunk: bytes = await asyncio.wait_for(read, max(self._until - loop.time(), 0))
                return chunk
            return b""
        finally:
            read.cancel()  # a no-op once it is done

    async def close(self) -> None:
        with contextlib.suppress(OSError):
            self._stdin.close()
