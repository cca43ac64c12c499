"""What the host benchmarks share in their own process: the raw channel page next to Helm's
frames, the same answers on both sides, paired measurements and the event-loop lag probe."""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable
from typing import Any

from broker.context import CallContext
from broker.summary import Confirmer
from tests.bench.raw_page import MIB, RawObject, raw_answer, raw_script
from ui.host import ExtensionProfile
from ui.host.page import HostPage
from ui.qt import QUrl, QWebChannel, QWebEngineScript, QWebEngineView

FRAME_SIZE = (640, 480)
"""Every frame measured, Helm's and raw, is shown at this size: memory grows with it."""


class RawAnswers:
    """A call handler for Helm's bridge that answers as ``RawObject`` does, at once: the
    bridge rows then measure the bridge alone."""

    async def request_json(
        self, ctx: CallContext, connection_id: str, operation: str, args_json: str, confirm: Confirmer
    ) -> str:
        return raw_answer(operation)


class RawFrame:
    """A page on the same kind of profile, with qwebchannel.js in the page's own world."""

    def __init__(self, profile: ExtensionProfile) -> None:
        self.profile = profile  # a collected profile would take the page down with it
        self.web = QWebEngineView()
        self.web.resize(*FRAME_SIZE)
        self.page = HostPage(profile.profile, profile.host, self.web)
        self.web.setPage(self.page)
        self.page.scripts().insert(raw_script())
        self.raw = RawObject()
        self.channel = QWebChannel(self.page)
        self.channel.registerObject("raw", self.raw)
        self.page.setWebChannel(self.channel, QWebEngineScript.ScriptWorldId.MainWorld.value)
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
    "RawAnswers",
    "RawFrame",
    "RawObject",
    "median_of",
    "paired_medians",
    "worst_loop_lag",
]
