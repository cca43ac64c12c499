"""Broker overhead per MCP tool call against a raw SDK ClientSession to the same server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from broker.mcp import profiles
from broker.ratelimit import CallAdmission
from tests.bench.conftest import Bench
from tests.helpers import new_broker
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
                assert not result.isError

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
