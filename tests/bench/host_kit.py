"""What the host benchmarks share in their own process: the raw channel page next to Helm's
frames (and its two floors: the same page in Helm's isolated world, and Helm's own page scripts
around a bare object), the same answers on every side, paired measurements and the event-loop
lag probe."""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any

from broker.context import CallContext
from broker.summary import Confirmer
from tests.bench.raw_page import MIB, RawObject, raw_answer, raw_script
from ui.aio import emitted
from ui.host import ExtensionProfile
from ui.host.page import HostPage
from ui.host.shim import bridge_scripts
from ui.qt import QUrl, QWebChannel, QWebEngineScript, QWebEngineView, Signal, Slot

World = QWebEngineScript.ScriptWorldId

FRAME_SIZE = (640, 480)
"""Every frame measured, Helm's and raw, is shown at this size: memory grows with it."""


class RawAnswers:
    """A call handler for Helm's bridge that answers as ``RawObject`` does, at once: the
    bridge rows then measure the bridge alone."""

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        return raw_answer(operation)


class RelayObject(RawObject):
    """The bare object behind Helm's own page scripts: it answers in its slot, as ``RawObject``
    does, speaks the bridge's batches (``ui.host.bridge``: a batch of calls in, their answers
    out in one message) and has the ``ready`` slot Helm's isolated world calls once connected."""

    doneMany = Signal(list)

    @Slot(list)
    def callMany(self, calls: list[list[str]]) -> None:
        self.doneMany.emit([[call[0], raw_answer(call[2])] for call in calls])

    @Slot()
    def ready(self) -> None:
        return None


class Raw(Enum):
    """Which bare page a ``RawFrame`` is."""

    MAIN = "main"
    """qwebchannel.js and the raw shim in the page's own world: the baseline."""
    ISOLATED = "isolated"
    """The same, in Helm's isolated world; the calls are made from that world too (``run``)."""
    RELAY = "relay"
    """Helm's own page scripts (``ui.host.shim``: the channel in Helm's isolated world, the
    private node, the page's frozen ``helm``) around a ``RelayObject``: a call crosses the
    worlds as Helm's does, but reaches no Helm Python."""


class RawFrame:
    """A page on the same kind of profile as Helm's frames, with a bare channel object."""

    def __init__(self, profile: ExtensionProfile, raw: Raw = Raw.MAIN) -> None:
        self.profile = profile  # a collected profile would take the page down with it
        self.kind = raw
        self.web = QWebEngineView()
        self.web.resize(*FRAME_SIZE)
        self.page = HostPage(profile.profile, profile.host, self.web)
        self.web.setPage(self.page)
        scripts: tuple[QWebEngineScript, ...] = bridge_scripts() if raw is Raw.RELAY else (raw_script(),)
        world = World.MainWorld if raw is Raw.MAIN else World.ApplicationWorld
        for script in scripts:
            if raw is Raw.ISOLATED:
                script.setWorldId(world.value)
            self.page.scripts().insert(script)
        self.raw = RelayObject() if raw is Raw.RELAY else RawObject()
        self.channel = QWebChannel(self.page)
        self.channel.registerObject("helm" if raw is Raw.RELAY else "raw", self.raw)
        self.page.setWebChannel(self.channel, world.value)
        self.url = f"helm-ext://{profile.host}/index.html"

    async def load(self) -> None:
        loaded = asyncio.get_running_loop().create_future()
        self.page.loadFinished.connect(lambda ok: loaded.done() or loaded.set_result(ok))
        self.page.load(QUrl(self.url))
        assert await asyncio.wait_for(loaded, 20)

    def close(self) -> None:
        self.web.setPage(None)  # type: ignore[arg-type]
        self.page.deleteLater()
        self.web.deleteLater()
        self.profile.deleteLater()


_tags = itertools.count(1)


async def run_in(frame: RawFrame, expression: str, within: float = 120.0) -> Any:
    """The JSON value of ``expression`` (a promise is awaited) in the world that holds the
    frame's ``helm``: the page's own, or Helm's isolated world for ``Raw.ISOLATED`` (a page can
    never run code there; only this bench does, to measure the world without the relay)."""
    world = World.ApplicationWorld if frame.kind is Raw.ISOLATED else World.MainWorld
    tag = f"helm-bench-{next(_tags)}:"
    logged = emitted(frame.page.console, within, lambda _level, message, *_: message.startswith(tag))
    frame.page.runJavaScript(
        f"Promise.resolve().then(() => ({expression})).then("
        f"v => console.log({json.dumps(tag)} + JSON.stringify({{value: v}})),"
        f"e => console.log({json.dumps(tag)} + JSON.stringify({{error: String(e)}})))",
        world.value,
    )
    _level, message, *_ = await logged
    outcome = json.loads(message[len(tag) :])
    if "error" in outcome:
        raise AssertionError(f"page code failed: {outcome['error']}")
    return outcome.get("value")


async def median_of(n: int, measure: Callable[[], Awaitable[float]]) -> float:
    return statistics.median([await measure() for _ in range(n)])


async def paired_medians(
    n: int, helm: Callable[[], Awaitable[float]], raw: Callable[[], Awaitable[float]]
) -> tuple[float, float]:
    """Medians of ``n`` runs of each, taken in turns, so a machine that gets busier or quieter
    during the run weighs on both sides alike."""
    helms, raws = [], []
    for _ in range(n):
        helms.append(await helm())
        raws.append(await raw())
    return statistics.median(helms), statistics.median(raws)


async def medians_in_turns(n: int, *sides: Callable[[], Awaitable[float]]) -> list[float]:
    """The median of ``n`` runs of each side, taken in turns; each turn starts one side later
    than the one before, so no side always runs first or after the same other side."""
    runs: list[list[float]] = [[] for _ in sides]
    for turn in range(n):
        for k in range(len(sides)):
            index = (turn + k) % len(sides)
            runs[index].append(await sides[index]())
    return [statistics.median(got) for got in runs]


PROBE_PERIOD = 0.005


async def worst_loop_lag(work: Callable[[], Awaitable[Any]]) -> float:
    """The longest the event loop (Qt's, which also paints the window) was late while ``work``
    ran: a 5 ms timer that records how late each tick fires."""
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        while not done.is_set():
            start = loop.time()
            await asyncio.sleep(PROBE_PERIOD)
            lags.append(loop.time() - start - PROBE_PERIOD)

    task = asyncio.create_task(probe())
    try:
        await work()
    finally:
        done.set()
        await task
    return max(lags)


__all__ = [
    "FRAME_SIZE",
    "MIB",
    "Raw",
    "RawAnswers",
    "RawFrame",
    "RawObject",
    "RelayObject",
    "median_of",
    "medians_in_turns",
    "paired_medians",
    "run_in",
    "worst_loop_lag",
]
