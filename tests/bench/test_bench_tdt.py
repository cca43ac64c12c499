"""Broker overhead per tdt-mcp call against a raw SDK ClientSession to the same real TDT child:
a plain read, and a preview (which Helm also keeps in its home, atomically, for the apply)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from broker.kinds.mcp.tdt import command_for
from broker.mcp import profiles
from broker.ratelimit import CallAdmission
from broker.workspaces import add_workspace, set_everyday, set_tdt_command
from tests.bench.conftest import Bench
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.servers.tdt import TdtWorkspace

REPEAT = 50
ROUNDS = 3
CONN: dict[str, Any] = {
    "id": "tdt",
    "kind": "tdt-mcp",
    "operations": ["tdt_workspace_status", "tdt_brain_names_preview"],
}


async def _both(tmp_path: Path, space: TdtWorkspace, program: list[str], bench: Bench) -> dict[str, float]:
    out: dict[str, float] = {}
    async with new_broker(tmp_path / "home") as broker:
        add_workspace(broker.home, "ws", space.root)
        ctx = await setup_extension(broker, tmp_path, manifest_dict([CONN]), workspace="ws")
        set_tdt_command(broker.home, "ws", program)
        set_everyday(broker.home, "ws", False)
        broker.admission = CallAdmission(per_minute=1_000_000)  # measure the call, not the limit
        command = command_for(broker.home.settings().workspace("ws"))
        params = StdioServerParameters(command=command[0], args=command[1:], env=profiles.safe_environment())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for tool in ("tdt_workspace_status", "tdt_brain_names_preview"):

                async def helm(tool: str = tool) -> None:
                    assert (await broker.call(ctx, "tdt", tool, {}))["ok"]

                async def raw(tool: str = tool) -> None:
                    assert not (await session.call_tool(tool, {})).is_error

                timings: dict[str, list[float]] = {"helm": [], "raw": []}
                for _ in range(ROUNDS):
                    timings["helm"].append(await bench.atime(helm, repeat=REPEAT, warmup=5))
                    timings["raw"].append(await bench.atime(raw, repeat=REPEAT, warmup=5))
                out[f"{tool} helm"], out[f"{tool} raw"] = min(timings["helm"]), min(timings["raw"])
    return out


def test_broker_overhead_per_tdt_call(
    bench: Bench, tmp_path: Path, tdt_workspace: TdtWorkspace, tdt_program: list[str]
) -> None:
    got = asyncio.run(_both(tmp_path, tdt_workspace, tdt_program, bench))
    for tool, what in (("tdt_workspace_status", "a read"), ("tdt_brain_names_preview", "a preview, kept")):
        bench.record(f"tdt-mcp {what} ({tool}, real TDT)", got[f"{tool} helm"], got[f"{tool} raw"],
                     note="vs raw SDK call_tool (which also checks outputSchema)")  # fmt: skip
        assert got[f"{tool} helm"] > 0
