"""Broker overhead per MCP tool call against a raw SDK ClientSession to the same server.

Beside that row, two floors taken in the same turns: the SDK's session over Helm's own stdio
transport (what the transport costs), and the mcp kind's ``execute`` without the broker around
it (what the kind's checks cost); what is left of the first row is the broker's own cost per
call (test_bench_broker.py measures it alone)."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import cast

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from broker.kinds.base import Call
from broker.kinds.mcp import MCP
from broker.kinds.mcp.rules import McpConnection
from broker.mcp import profiles
from broker.mcp.session import McpLimits
from broker.mcp.stdio import open_stdio
from broker.ratelimit import CallAdmission
from tests.bench.conftest import Bench
from tests.helpers import new_broker
from tests.support import REPO
from tests.unit.kinds.mcp_setup import add_stdio, mcp_extension

CALLS = 400
"""Calls per side of each row, the two sides taken in turns, one call each."""


async def _in_turns(
    helm: Callable[[], Awaitable[object]], raw: Callable[[], Awaitable[object]], calls: int = CALLS
) -> tuple[float, float]:
    """The median seconds of one call of each side, called in turns one call at a time: a
    neighbour's burst slows both alike, and each server idles as long as the other between two
    of its calls (as it does between an extension's calls) instead of being kept hot by a loop
    of its own. Each side's code runs after the other's, so neither finds its code warmer."""
    for _ in range(20):
        await helm()
        await raw()
    helms, raws = [], []
    for _ in range(calls):
        start = time.perf_counter()
        await helm()
        middle = time.perf_counter()
        await raw()
        helms.append(middle - start)
        raws.append(time.perf_counter() - middle)
    return statistics.median(helms), statistics.median(raws)


async def _tool_call_rows(tmp_path: Path, command: list[str]) -> dict[str, tuple[float, float]]:
    """One echo call four ways, to the same server program: the raw SDK; the SDK's session over
    Helm's stdio transport (its bounded reader, its process group); the mcp kind's ``execute``
    alone (the session, the pin and policy checks, redaction, the size cap); ``broker.call``."""
    env = profiles.safe_environment()
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    limits = McpLimits()
    async with contextlib.AsyncExitStack() as stack:
        broker = await stack.enter_async_context(new_broker(tmp_path / "home"))
        add_stdio(broker, "everything", command)
        ctx = await mcp_extension(broker, tmp_path, "everything", ["echo"])
        broker.admission = CallAdmission(per_minute=1_000_000)  # measure the call, not the limit
        call = cast("Call[McpConnection]", broker._resolve(ctx, "m", "echo", {"message": "bench"}).call)
        kind = await broker.kind(MCP)
        read, write = await stack.enter_async_context(stdio_client(params))
        raw = await stack.enter_async_context(ClientSession(read, write))
        await raw.initialize()
        opened = open_stdio(command, env, tmp_path, limits.max_message, lambda: None)
        helm_read, helm_write, _child = await stack.enter_async_context(opened)
        transport = await stack.enter_async_context(ClientSession(helm_read, helm_write))
        await transport.initialize()

        async def through_raw() -> None:
            assert not (await raw.call_tool("echo", {"message": "bench"})).is_error

        async def through_transport() -> None:
            assert not (await transport.call_tool("echo", {"message": "bench"})).is_error

        async def kind_alone() -> None:
            assert (await kind.execute(call))["ok"]

        async def through_broker() -> None:
            assert (await broker.call(ctx, "m", "echo", {"message": "bench"}))["ok"]

        return {
            "helm": await _in_turns(through_broker, through_raw),
            "transport": await _in_turns(through_transport, through_raw),
            "kind": await _in_turns(kind_alone, through_raw),
        }


def test_broker_overhead_per_mcp_tool_call(bench: Bench, tmp_path: Path, everything_stdio_command: list[str]):
    got = asyncio.run(_tool_call_rows(tmp_path, everything_stdio_command))
    note = "vs raw SDK ClientSession.call_tool, in turns"
    bench.record("mcp tool call (everything echo, stdio)", *got["helm"], note=note)
    bench.record("mcp floor: SDK session over Helm's stdio transport", *got["transport"], note=note)
    bench.record("mcp floor: the mcp kind's execute alone, no broker", *got["kind"], note=note)
    assert got["helm"][0] > 0


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
