"""A frame's first call of a kind waits for the kind's import in a worker thread, not on the
event loop, and then reaches the real broker; a frame cannot make it hold more calls than the
broker would."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import app.kind_loader as kind_loader
from app.kind_loader import KindLoader
from broker import Broker, CallContext
from broker.kinds import KINDS
from broker.ratelimit import MAX_IN_FLIGHT_PER_INSTANCE
from tests.helpers import ScriptedConfirmer, manifest_dict, new_broker, setup_extension

FILES = {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["read"]}
READ = json.dumps({"path": "a.md"})


@dataclass(frozen=True)
class HeldImport:
    """The files kind, whose import waits until the test lets it go (an import that takes long)."""

    released: threading.Event

    def load(self) -> Any:
        assert self.released.wait(10), "the test never let the import finish"
        return KINDS["files"].load()


class CountingBroker:
    """The real broker; counts the calls that reached it."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.reached = 0

    async def request_json(self, *args: Any) -> str:
        self.reached += 1
        return await self.broker.request_json(*args)


@pytest.fixture
async def setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    released = threading.Event()
    monkeypatch.setattr(kind_loader, "KINDS", {**KINDS, "files": HeldImport(released)})
    async with new_broker(tmp_path / "home") as broker:
        ctx = await setup_extension(broker, tmp_path, manifest_dict([FILES]))
        (tmp_path / "root" / "a.md").write_text("hello\n")
        counting = CountingBroker(broker)
        yield KindLoader(counting, broker), counting, ctx, released  # type: ignore[arg-type]
        released.set()


async def test_a_call_waits_for_its_kind_off_the_loop_then_reaches_the_broker(setting: Any) -> None:
    loader, broker, ctx, released = setting
    call = asyncio.ensure_future(loader.request_json(ctx, "notes", "read", READ, ScriptedConfirmer()))
    for _ in range(5):  # the loop keeps turning while the kind imports
        await asyncio.sleep(0.01)
    assert not call.done() and broker.reached == 0
    released.set()
    result = json.loads(await asyncio.wait_for(call, 10))
    assert result["ok"] and result["data"]["text"] == "hello\n"
    assert broker.reached == 1


async def test_a_frame_cannot_make_more_calls_wait_than_the_broker_keeps_in_flight(setting: Any) -> None:
    loader, broker, ctx, released = setting
    calls = [
        asyncio.ensure_future(loader.request_json(ctx, "notes", "nosuch", "{}", ScriptedConfirmer()))
        for _ in range(MAX_IN_FLIGHT_PER_INSTANCE + 3)
    ]
    await asyncio.sleep(0.05)
    assert broker.reached == 3, "calls past the broker's cap go straight to it"
    released.set()
    await asyncio.wait_for(asyncio.gather(*calls), 10)
    assert broker.reached == MAX_IN_FLIGHT_PER_INSTANCE + 3


async def test_a_connection_the_manifest_does_not_declare_goes_straight_to_the_broker(setting: Any) -> None:
    loader, broker, ctx, _ = setting
    other = CallContext(ctx.workspace, ctx.extension, "other-frame")
    result = json.loads(await loader.request_json(other, "missing", "read", READ, ScriptedConfirmer()))
    assert result["error"]["code"] == "refused" and broker.reached == 1
