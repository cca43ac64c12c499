"""What the host benchmarks share: the raw channel page they compare against, the event-loop
lag probe and the memory of a process tree."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from broker.context import CallContext
from broker.summary import Confirmer
from ui.host import ExtensionProfile
from ui.host.page import HostPage
from ui.host.shim import _qwebchannel_js
from ui.qt import QObject, QUrl, QWebChannel, QWebEngineScript, QWebEngineView, Signal, Slot

MIB = 1024 * 1024
FRAME_SIZE = (640, 480)
"""Every frame measured, Helm's and raw, is shown at this size: memory grows with it."""

RAW_SHIM = """
(function () {
  var pending = Object.create(null), next = 0, obj = null, queued = [];
  new QWebChannel(qt.webChannelTransport, function (ch) {
    obj = ch.objects.raw;
    obj.done.connect(function (id, text) { var r = pending[id]; delete pending[id]; r(JSON.parse(text)); });
    queued.splice(0).forEach(function (f) { f(); });
  });
  window.helm = { call: function (c, o, a) {
    return new Promise(function (resolve) {
      next += 1; var id = String(next); pending[id] = resolve;
      var send = function () { obj.call(id, c, o, JSON.stringify(a)); };
      if (obj) send(); else queued.push(send);
    });
  } };
})();
"""


def raw_answer(operation: str) -> str:
    """The result text both sides send: 1 MiB of data for ``big``, none for anything else."""
    if operation == "big":
        return '{"ok":true,"data":"' + "x" * MIB + '","error":null}'
    return '{"ok":true,"data":null,"error":null}'


class RawObject(QObject):
    """A bare channel object: answers every call synchronously from the slot."""

    done = Signal(str, str)

    @Slot(str, str, str, str)
    def call(self, request_id: str, _connection: str, operation: str, args_json: str) -> None:
        self.done.emit(request_id, raw_answer(operation))


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
        script = QWebEngineScript()
        script.setSourceCode(_qwebchannel_js() + RAW_SHIM)
        script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld.value)
        script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
        self.page.scripts().insert(script)
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


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    return children


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _is_engine(pid: int) -> bool:
    try:
        return b"QtWebEngineProcess" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False


def tree_pss_mib(root: int | None = None, *, engine_only: bool = False) -> float:
    """Proportional memory of ``root`` (this process) and its descendants, MiB; with
    ``engine_only``, of the web engine's processes alone below it (not, say, MCP servers)."""
    children = _children()
    top = os.getpid() if root is None else root
    total_kib, todo = _pss_kib(top), list(children.get(top, []))
    while todo:
        pid = todo.pop()
        if engine_only and not _is_engine(pid):
            continue
        todo.extend(children.get(pid, []))
        total_kib += _pss_kib(pid)
    return total_kib / 1024
