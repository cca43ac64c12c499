"""An agent's streamed updates through Helm's session against a raw SDK client on the same agent.

Helm adds back-pressure (``Flow``), the event conversion and the key scrub; the raw client only
counts the updates. Both drive the same scripted agent over stdio, one warm connection each.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import acp
from acp import schema

from broker.childenv import safe_environment
from tests.bench.conftest import Bench
from tests.unit.agents.agent_setup import AGENT, make_setup, session

UPDATES = 2000
REPEAT = 5
FLOOD = json.dumps([{"flood": UPDATES}])


async def _helm(tmp_path: Path, bench: Bench) -> tuple[float, int]:
    setup = make_setup(tmp_path)
    setup.add_agent()
    async with setup.host() as host:
        s = session(host)

        async def one() -> None:
            count = 0
            async for event in s.run(FLOOD):
                count += event.type == "message"
            assert count == UPDATES

        seconds = await bench.atime(one, repeat=REPEAT, warmup=1)
        high_water = s._flow.high_water if s._flow else 0
        await s.close()
    return seconds, high_water


class _Counter:
    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1

    async def request_permission(self, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


async def _raw(tmp_path: Path, bench: Bench) -> float:
    client = _Counter()
    env = safe_environment()
    async with acp.spawn_agent_process(client, sys.executable, AGENT, env=env, cwd=tmp_path) as (conn, _):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        sid = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id

        async def one() -> None:
            client.updates = 0
            await conn.prompt(session_id=sid, prompt=[schema.TextContentBlock(type="text", text=FLOOD)])
            assert client.updates == UPDATES

        return await bench.atime(one, repeat=REPEAT, warmup=1)


def test_streamed_updates_through_a_session(bench: Bench, tmp_path: Path):
    helm, high_water = asyncio.run(_helm(tmp_path / "helm", bench))
    (tmp_path / "raw").mkdir()
    raw = asyncio.run(_raw(tmp_path / "raw", bench))
    bench.record(
        f"agent turn of {UPDATES} streamed updates", helm, raw,
        note=f"vs raw SDK client; at most {high_water} events queued",
    )  # fmt: skip
    assert helm > 0
