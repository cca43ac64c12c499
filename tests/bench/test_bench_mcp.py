"""Broker overhead per MCP tool call against a raw SDK ClientSession to the same server."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from broker.mcp import profiles
from broker.ratelimit import CallAdmission
from tests.bench.conftest import Bench
from tests.helpers import new_broker
from tests.support import REPO
from tests.unit.kinds.mcp_setup import add_stdio, mcp_extension

REPEAT = 200
ROUNDS = 3


async def _both(tmp_path: Path, command: list[str], bench: Bench) -> tuple[float, float]:
    """Helm's call and the raw SDK's, to the same server program, measured in turns so a noisy
    neighbour slows both alike; the best round of each."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=profiles.safe_environment())
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "everything", command)
        ctx = await mcp_extension(broker, tmp_path, "everything", ["echo"])
        broker.admission = CallAdmission(per_minute=1_000_000)  # measure the call, not the limit

        async def helm() -> None:
            result = await broker.call(ctx, "m", "echo", {"message": "bench"})
            assert result["ok"]

        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()

            async def raw() -> None:
                result = await session.call_tool("echo", {"message": "bench"})
                assert not result.is_error

            timings: dict[str, list[float]] = {"helm": [], "raw": []}
            for _ in range(ROUNDS):
                timings["helm"].append(await bench.atime(helm, repeat=REPEAT, warmup=10))
                timings["raw"].append(await bench.atime(raw, repeat=REPEAT, warmup=10))
    return min(timings["helm"]), min(timings["raw"])


def test_broker_overhead_per_mcp_tool_call(bench: Bench, tmp_path: Path, everything_stdio_command: list[str]):
    helm, raw = asyncio.run(_both(tmp_path, everything_stdio_command, bench))
    bench.record(
        "mcp tool call (everything echo, stdio)", helm, raw, note="vs raw SDK ClientSession.call_tool"
    )
    assert helm > 0


STORM_CALLS = 40


class LoopLag:
    """The longest the event loop was held: a ticker that asks to wake every millisecond."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(0.001)
            self.worst = max(self.worst, loop.time() - before - 0.001)

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.get_running_loop().create_task(self._tick())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def _storm(tmp_path: Path, command: list[str]) -> dict[str, float]:
    """Calls to a server that sends list_changed after every answer and offers as many tools as
    in pages: Helm's calls against the raw SDK's (which never lists), per call and
    the longest the loop was held meanwhile."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=profiles.safe_environment())
    out: dict[str, float] = {}
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "storm", command)
        ctx = await mcp_extension(broker, tmp_path, "storm", ["echo"])
        broker.admission = CallAdmission(per_minute=1_000_000)
        assert (await broker.call(ctx, "m", "echo", {"text": "warm"}))["ok"]
        async with LoopLag() as lag:
            start = time.perf_counter()
            for _ in range(STORM_CALLS):
                assert (await broker.call(ctx, "m", "echo", {"text": "x"}))["ok"]
            out["helm"], out["helm_lag"] = (time.perf_counter() - start) / STORM_CALLS, lag.worst
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("echo", {"text": "warm"})
        async with LoopLag() as lag:
            start = time.perf_counter()
            for _ in range(STORM_CALLS):
                assert not (await session.call_tool("echo", {"text": "x"})).is_error
            out["raw"], out["raw_lag"] = (time.perf_counter() - start) / STORM_CALLS, lag.worst
    return out


def test_calls_under_a_list_changed_storm(bench: Bench, tmp_path: Path):
    command = [sys.executable, str(REPO / "tests" / "servers" / "mcp_storm.py"), "--tools", "2000"]
    got = asyncio.run(_storm(tmp_path, [*command, "--page", "250"]))
    bench.record(
        "mcp call under a list_changed storm (2000 tools)", got["helm"], got["raw"], note="vs raw SDK"
    )
    bench.record(
        "mcp loop held at most, list_changed storm", got["helm_lag"], max(got["raw_lag"], 1e-4),
        note="vs raw SDK's worst",
    )  # fmt: skip
    assert got["helm"] > 0
