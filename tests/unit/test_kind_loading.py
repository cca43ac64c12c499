"""A kind's libraries are imported inside ``Broker.kind()`` in a worker thread that the call
awaits: the event loop goes on meanwhile, calls that need the kind share one import, and a kind
that cannot be imported is ``unavailable`` and tried again next time."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from broker import CallContext
from broker.kinds import registered
from broker.kinds.spec import KindSpec
from broker.ratelimit import MAX_IN_FLIGHT_PER_INSTANCE
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.kinds.echo import ECHO

ROOM = {"id": "e", "kind": "echo", "room": "lobby", "operations": ["hello"]}


class HeldImport:
    """``KindSpec.load`` for the echo kind waits until the test lets it go (an import that takes
    long) and remembers on which thread it ran; ``fail`` makes the next import raise."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.threads: list[threading.Thread] = []
        self.fail = False
        self.real = KindSpec.load

    def __call__(self, spec: KindSpec[Any, Any, Any]) -> Callable[..., Any]:
        if spec.name != "echo":
            return self.real(spec)
        self.threads.append(threading.current_thread())
        assert self.released.wait(10), "the test never let the import finish"
        if self.fail:
            self.fail = False
            raise ImportError("a library of the kind is missing")
        return self.real(spec)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldImport]:
    hold = HeldImport()
    monkeypatch.setattr(KindSpec, "load", lambda spec: hold(spec))
    with registered(ECHO):
        yield hold
    hold.released.set()


async def installed(tmp_path: Path) -> CallContext:
    """An approved echo extension in a home that a new broker then opens (approving it loaded
    the kind in the broker that approved it)."""
    async with new_broker(tmp_path / "home") as broker:
        assert ECHO.profiles is not None
        ECHO.profiles.store(broker.home, broker.credentials).save(
            ECHO.profiles.parse("lobby", {"greeting": "hi"}), {"token": "t"}
        )
        return await setup_extension(broker, tmp_path, manifest_dict([ROOM]))


async def test_a_call_waits_for_its_kind_in_a_worker_thread_while_the_loop_goes_on(
    held: HeldImport, tmp_path: Path
) -> None:
    held.released.set()
    ctx = await installed(tmp_path)
    held.released.clear()
    held.threads.clear()
    async with new_broker(tmp_path / "home") as broker:
        calls = [asyncio.ensure_future(broker.call(ctx, "e", "hello", {"n": i})) for i in range(3)]
        turns = 0
        for _ in range(5):  # the loop keeps turning while the kind imports
            await asyncio.sleep(0.01)
            turns += 1
        assert turns == 5 and not any(call.done() for call in calls)
        held.released.set()
        results = await asyncio.wait_for(asyncio.gather(*calls), 10)
    assert [r["ok"] for r in results] == [True, True, True]
    assert len(held.threads) == 1  # one import, shared by the three calls
    assert held.threads[0] is not threading.main_thread()


async def test_a_kind_that_cannot_be_imported_is_unavailable_and_tried_again(
    held: HeldImport, tmp_path: Path
) -> None:
    held.released.set()
    ctx = await installed(tmp_path)
    held.fail = True
    async with new_broker(tmp_path / "home") as broker:
        failed = await broker.call(ctx, "e", "hello", {})
        again = await broker.call(ctx, "e", "hello", {})
    assert failed["error"]["code"] == "unavailable"
    assert "could not be loaded" in failed["error"]["message"]
    assert again["ok"]


async def test_calls_waiting_for_their_kind_count_against_the_frames_calls_in_flight(
    held: HeldImport, tmp_path: Path
) -> None:
    held.released.set()
    ctx = await installed(tmp_path)
    held.released.clear()
    async with new_broker(tmp_path / "home") as broker:
        calls = [
            asyncio.ensure_future(broker.call(ctx, "e", "hello", {}))
            for _ in range(MAX_IN_FLIGHT_PER_INSTANCE + 3)
        ]
        await asyncio.sleep(0.05)
        refused = [call.result() for call in calls if call.done()]
        held.released.set()
        results = await asyncio.wait_for(asyncio.gather(*calls), 10)
    assert [r["error"]["code"] for r in refused] == ["rate_limited"] * 3
    assert sum(r["ok"] for r in results) == MAX_IN_FLIGHT_PER_INSTANCE
