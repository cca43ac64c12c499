"""Broker overhead per MCP tool call against a raw SDK ClientSession to the same server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from broker.kinds.mcp import profiles
from broker.ratelimit import CallAdmission
from tests.bench.conftest import Bench
from tests.helpers import new_broker
from tests.unit.kinds.mcp_setup import add_stdio, mcp_extension

REPEAT = 200


async def _helm(tmp_path: Path, command: list[str], bench: Bench) -> float:
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "everything", command)
        ctx = await mcp_extension(broker, tmp_path, "everything", ["echo"])
        broker.admission = CallAdmission(per_minute=1_000_000)  # measure the call, not the limit

        async def one() -> None:
            result = await broker.call(ctx, "m", "echo", {"message": "bench"})
            assert result["ok"]

        return await bench.atime(one, repeat=REPEAT, warmup=10)


async def _raw(command: list[str], bench: Bench) -> float:
    params = StdioServerParameters(command=command[0], args=command[1:], env=profiles.safe_environment())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def one() -> None:
            result = await session.call_tool("echo", {"message": "bench"})
            assert not result.isError

        return await bench.atime(one, repeat=REPEAT, warmup=10)


def test_broker_overhead_per_mcp_tool_call(bench: Bench, tmp_path: Path, everything_stdio_command: list[str]):
    helm = asyncio.run(_helm(tmp_path, everything_stdio_command, bench))
    raw = asyncio.run(_raw(everything_stdio_command, bench))
    bench.record(
        "mcp tool call (everything echo, stdio)", helm, raw, note="vs raw SDK ClientSession.call_tool"
    )
    assert helm > 0
