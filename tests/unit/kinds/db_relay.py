"""A TCP relay in front of a real database server, to take the server "down" and back up.

Stopping the shared test server would break every other test; closing this relay (and every
link through it) looks the same to Helm: refused connections, then pooled links that are dead.
It also counts round trips (the benchmarks report them per call).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from tests.support import LOOPBACK, free_port


class Relay:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.round_trips = 0
        """How many times the client spoke after the server had (or first): its round trips."""
        self._client_spoke_last = False
        self.sent_to_client = 0
        """Bytes passed on from the server to the client."""

    def _saw(self, from_client: bool, size: int) -> None:
        if not from_client:
            self.sent_to_client += size
        if from_client and not self._client_spoke_last:
            self.round_trips += 1
        self._client_spoke_last = from_client

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, LOOPBACK, self.port)

    async def stop(self) -> None:
        """Stop listening and cut every open link."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for w in list(self._writers):
            w.close()
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(LOOPBACK, self.target_port)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        for src, dst, from_client in ((reader, up_writer, True), (up_reader, writer, False)):
            seen = (lambda c: lambda size: self._saw(c, size))(from_client)
            task = asyncio.get_running_loop().create_task(_pipe(src, dst, seen))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, seen: Callable[[int], None]) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await src.read(65536):
            seen(len(data))
            dst.write(data)
            await dst.drain()
    dst.close()
