"""The extension host against a raw QWebChannel in the same web engine.

Rows: a bridge round trip (1000 sequential and 200 concurrent no-op calls), a 1 MiB result
delivered to the page, the event loop's worst lag while a page floods calls (how long the UI
could not repaint), start-up time to the first extension ready, memory per extension frame.
The no-op handler answers at once, so the rows measure the bridge alone (the isolated world,
the private port, the owned task, the JSON text) against a bare channel object.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.demo import set_up_demo
from tests.bench.conftest import Bench
from tests.e2e.conftest import QT_NOISE, qloop  # noqa: F401 (fixture; engine set-up)
from tests.e2e.conftest import run as run
from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, make_view, wait_ready
from tests.helpers import new_broker
from ui.host import ExtensionProfile, extension_host
from ui.host.page import HostPage
from ui.host.shim import _qwebchannel_js
from ui.qt import QObject, QUrl, QWebChannel, QWebEngineScript, QWebEngineView, Signal, Slot

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

MIB = 1024 * 1024
FRAMES = 4

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

SEQUENTIAL = """(async () => { const t = performance.now();
  for (let i = 0; i < 1000; i++) { const r = await helm.call('c', 'noop', {}); if (!r.ok) throw r; }
  return (performance.now() - t) / 1e6; })()"""
CONCURRENT = """(async () => { const t = performance.now();
  const rs = await Promise.all(Array.from({length: 200}, () => helm.call('c', 'noop', {})));
  if (!rs.every(r => r.ok)) throw rs; return (performance.now() - t) / 1000 / 200; })()"""
BIG = f"""(async () => {{ const t = performance.now();
  const r = await helm.call('c', 'big', {{bytes: {MIB}}}); if (r.data.length !== {MIB}) throw r.data.length;
  return (performance.now() - t) / 1000; }})()"""


class RawObject(QObject):
    """A bare channel object: answers every call synchronously from the slot."""

    done = Signal(str, str)

    @Slot(str, str, str, str)
    def call(self, request_id: str, _connection: str, operation: str, args_json: str) -> None:
        if operation == "big":
            self.done.emit(request_id, '{"ok":true,"data":"' + "x" * MIB + '","error":null}')
        else:
            self.done.emit(request_id, '{"ok":true,"data":null,"error":null}')


class RawFrame:
    """A page on the same kind of profile, with qwebchannel.js in the page's own world."""

    def __init__(self, profile: ExtensionProfile) -> None:
        self.profile = profile  # a collected profile would take the page down with it
        self.web = QWebEngineView()
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


async def median_of(n: int, measure: Any) -> float:
    return statistics.median([await measure() for _ in range(n)])


def test_bridge_round_trips_against_a_raw_channel(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> dict[str, tuple[float, float]]:
        view = make_view(folder, EchoHandler())
        raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw")))
        await wait_ready(view)
        await raw.load()
        out = {}
        for name, code in (("seq", SEQUENTIAL), ("conc", CONCURRENT), ("big", BIG)):
            await evaluate(view, code, timeout=120)  # warm-up
            await evaluate(raw, code, timeout=120)
            helm = await median_of(5, lambda code=code: evaluate(view, code, timeout=120))
            base = await median_of(5, lambda code=code: evaluate(raw, code, timeout=120))
            out[name] = (helm, base)
        await view.aclose()
        raw.close()
        return out

    result = run(scenario(), timeout=600)
    bench.record("bridge: 1000 sequential no-op calls (per call)", *result["seq"], note="raw QWebChannel")
    bench.record("bridge: 200 concurrent no-op calls (per call)", *result["conc"], note="raw QWebChannel")
    bench.record("bridge: 1 MiB result delivered to the page", *result["big"], note="raw QWebChannel")


FLOOD = """(async () => { for (let k = 0; k < 5; k++) {
  const rs = await Promise.all(Array.from({length: 200}, () => helm.call('c', 'noop', {})));
  if (!rs.every(r => r.ok)) throw rs; } return 0; })()"""
PROBE_PERIOD = 0.005


async def worst_loop_lag(work: Any) -> float:
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


def test_event_loop_lag_under_many_concurrent_calls(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> tuple[float, float]:
        view = make_view(folder, EchoHandler())
        raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.lag")))
        await wait_ready(view)
        await raw.load()
        await evaluate(view, FLOOD, timeout=120)  # warm-up
        await evaluate(raw, FLOOD, timeout=120)
        helm = await median_of(5, lambda: worst_loop_lag(lambda: evaluate(view, FLOOD, timeout=120)))
        base = await median_of(5, lambda: worst_loop_lag(lambda: evaluate(raw, FLOOD, timeout=120)))
        await view.aclose()
        raw.close()
        return helm, base

    helm, raw = run(scenario(), timeout=600)
    bench.record(
        "UI: worst event-loop lag, 5 x 200 concurrent calls", helm, raw, note="raw QWebChannel, same flood"
    )


def test_start_up_to_first_extension_ready(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def helm_once(i: int) -> float:
        start = time.perf_counter()
        view = make_view(folder, EchoHandler(), extension=f"com.example.start{i}")
        await wait_ready(view)
        elapsed = time.perf_counter() - start
        await view.aclose()
        return elapsed

    async def raw_once(i: int) -> float:
        start = time.perf_counter()
        frame = RawFrame(ExtensionProfile(folder, extension_host("ws", f"raw.start{i}")))
        await frame.load()
        elapsed = time.perf_counter() - start
        frame.close()
        return elapsed

    async def scenario() -> tuple[float, float]:
        await helm_once(-1)
        await raw_once(-1)
        helm = statistics.median([await helm_once(i) for i in range(5)])
        raw = statistics.median([await raw_once(i) for i in range(5)])
        return helm, raw

    helm, raw = run(scenario(), timeout=300)
    bench.record(
        "start-up: new extension frame to ready", helm, raw, note="new profile + page load, raw channel page"
    )


def _tree_pss_mib() -> float:
    """Proportional memory of this process and every descendant (the engine's processes)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    total_kib, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kib += int(line.split()[1])
        except OSError:
            continue
    return total_kib / 1024


def test_memory_per_extension_frame(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> tuple[float, float]:
        # One frame of each kind first, kept open, so the engine's shared processes (browser
        # side, GPU, compositor) are paid before either side is measured. Then raw pages, left
        # open, and Helm frames on top: no process of the other side is still shutting down.
        warm_view = make_view(folder, EchoHandler(), extension="com.example.warm")
        warm_view.show()
        await wait_ready(warm_view)
        warm_raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.warm")))
        warm_raw.web.show()
        await warm_raw.load()
        before = _tree_pss_mib()
        frames = []
        for i in range(FRAMES):
            frame = RawFrame(ExtensionProfile(folder, extension_host("ws", f"raw.mem{i}")))
            frame.web.show()
            await frame.load()
            await evaluate(frame, "helm.call('c', 'noop', {})")
            frames.append(frame)
        raw = (_tree_pss_mib() - before) / FRAMES
        before = _tree_pss_mib()
        views = []
        for i in range(FRAMES):
            view = make_view(folder, EchoHandler(), extension=f"com.example.mem{i}")
            view.show()
            await wait_ready(view)
            await evaluate(view, "helm.call('c', 'noop', {})")
            views.append(view)
        helm = (_tree_pss_mib() - before) / FRAMES
        for view in views:
            await view.aclose()
        for frame in [*frames, warm_raw]:
            frame.close()
        await warm_view.aclose()
        return helm, raw

    helm, raw = run(scenario(), timeout=300)
    bench.record(
        "memory: per extension frame (PSS, own origin)",
        helm,
        raw,
        unit="MiB",
        note=f"{FRAMES} frames vs raw channel pages",
    )


def _cold_start(mode: str, target: Path) -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("host_startup.py")), mode, str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    assert "READY" in out, out
    return time.perf_counter() - started


def test_cold_start_to_first_extension_ready(run: Any, bench: Bench, tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def set_up() -> None:
        async with new_broker(home) as broker:
            await set_up_demo(broker)

    run(set_up())
    folder = copy_page("probe", tmp_path / "raw")
    helm = statistics.median([_cold_start("helm", home) for _ in range(3)])
    raw = statistics.median([_cold_start("raw", folder) for _ in range(3)])
    bench.record(
        "start-up: process start to first extension ready",
        helm,
        raw,
        note="demo home vs bare QWebEngineView page",
    )


HUGE = 128 * MIB
HUGE_CALL = f"""(async () => {{ const args = {{text: 'x'.repeat({HUGE})}};
  const r = await helm.call('c', 'huge', args); return r.ok ? 'ok' : r.error.code; }})()"""


def _reset_peak_rss() -> float:
    """Reset this process's peak resident memory (Linux) and return its current size, MiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_mib("VmRSS")


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"{field} not in /proc/self/status")


async def _huge_call(frame: Any) -> tuple[float, float, Any]:
    """Worst event-loop lag (s) and peak memory growth of Helm's own process (MiB)."""
    before = _reset_peak_rss()
    answer: list[Any] = []

    async def work() -> None:
        answer.append(await evaluate(frame, HUGE_CALL, timeout=120))

    lag = await worst_loop_lag(work)
    return lag, _status_mib("VmHWM") - before, answer[0]


def test_a_128_mib_call_neither_stalls_nor_bloats_helm(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> tuple[tuple[float, float, Any], tuple[float, float, Any]]:
        async with new_broker(tmp_path / "home") as broker:
            view = make_view(folder, broker)
            await wait_ready(view)
            helm = await _huge_call(view)
            await view.aclose()
        raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.huge")))
        await raw.load()
        base = await _huge_call(raw)
        raw.close()
        return helm, base

    (helm_lag, helm_mem, answer), (raw_lag, raw_mem, _) = run(scenario(), timeout=600)
    bench.record(
        "UI: worst event-loop lag, one 128 MiB call",
        helm_lag,
        raw_lag,
        note=f"Helm answers {answer}; raw QWebChannel",
    )
    bench.record(
        "memory: Helm's peak growth, one 128 MiB call",
        helm_mem,
        raw_mem,
        unit="MiB",
        note="browser process; raw QWebChannel",
    )
