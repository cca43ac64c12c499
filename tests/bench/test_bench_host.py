"""The extension host against a raw QWebChannel in the same web engine.

Rows: a bridge round trip (1000 sequential and 200 concurrent no-op calls), a 1 MiB result
delivered to the page, the event loop's worst lag while a page floods calls (how long the UI
could not repaint), and while a dashboard works (one widget receiving 1 MiB results through the
real broker, three polling at the rate limit), and one 128 MiB call. The no-op handler answers
at once, so the bridge rows measure the bridge alone (the isolated world, the private port, the
owned task, the JSON text) against a bare channel object; both sides build the same answer
text the same way. Start-up and memory rows are in
test_bench_host_start.py and test_bench_host_memory.py.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from broker.extensions import install, review_and_approve
from broker.workspaces import add_workspace
from tests.bench.conftest import Bench
from tests.bench.host_kit import (
    MIB,
    Raw,
    RawAnswers,
    RawFrame,
    median_of,
    medians_in_turns,
    paired_medians,
    run_in,
    worst_loop_lag,
)
from tests.e2e.conftest import QT_NOISE  # engine set-up
from tests.e2e.host.kit import copy_page, evaluate, make_view, wait_ready
from tests.helpers import manifest_dict, new_broker
from ui.host import ExtensionProfile, extension_host

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

SEQUENTIAL = """(async () => { const t = performance.now();
  for (let i = 0; i < 1000; i++) { const r = await helm.call('c', 'noop', {}); if (!r.ok) throw r; }
  return (performance.now() - t) / 1e6; })()"""
CONCURRENT = """(async () => { const t = performance.now();
  const rs = await Promise.all(Array.from({length: 200}, () => helm.call('c', 'noop', {})));
  if (!rs.every(r => r.ok)) throw rs; return (performance.now() - t) / 1000 / 200; })()"""
BIG = f"""(async () => {{ const t = performance.now();
  const r = await helm.call('c', 'big', {{bytes: {MIB}}}); if (r.data.length !== {MIB}) throw r.data.length;
  return (performance.now() - t) / 1000; }})()"""


CONCURRENT_TURNS = 16
"""Runs of each side of the concurrent rows (about 20 ms each), in turns: four starts each."""


def _concurrent_in(frame: RawFrame) -> Callable[[], Awaitable[Any]]:
    return lambda: run_in(frame, CONCURRENT)


def test_bridge_round_trips_against_a_raw_channel(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> dict[str, tuple[float, ...]]:
        view = make_view(folder, RawAnswers())
        raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw")))
        isolated = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.isolated")), Raw.ISOLATED)
        relay = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.relay")), Raw.RELAY)
        await wait_ready(view)
        for frame in (raw, isolated, relay):
            await frame.load()
        out: dict[str, tuple[float, ...]] = {}
        for name, code in (("seq", SEQUENTIAL), ("big", BIG)):
            await evaluate(view, code, timeout=120)  # warm-up
            await evaluate(raw, code, timeout=120)
            out[name] = await paired_medians(
                7,
                lambda code=code: evaluate(view, code, timeout=120),
                lambda code=code: evaluate(raw, code, timeout=120),
            )
        # The concurrent row and its floors, in the same turns: Helm, the raw page in Helm's
        # isolated world, Helm's page scripts around a bare object, the raw page.
        sides: list[Callable[[], Awaitable[Any]]] = [
            lambda: evaluate(view, CONCURRENT, timeout=120),
            *(_concurrent_in(frame) for frame in (isolated, relay, raw)),
        ]
        for side in sides:
            await side()  # warm-up
        out["conc"] = tuple(await medians_in_turns(CONCURRENT_TURNS, *sides))
        await view.aclose()
        for frame in (raw, isolated, relay):
            frame.close()
        return out

    result = run(scenario(), timeout=600)
    helm, isolated, relay, raw = result["conc"]
    bench.record("bridge: 1000 sequential no-op calls (per call)", *result["seq"], note="raw QWebChannel")
    bench.record("bridge: 200 concurrent no-op calls (per call)", helm, raw, note="raw QWebChannel")
    bench.record(
        "bridge floor: 200 concurrent, raw page in Helm's world", isolated, raw,
        note="raw QWebChannel; the world alone",
    )  # fmt: skip
    bench.record(
        "bridge floor: 200 concurrent, Helm's page scripts alone", relay, raw,
        note="raw QWebChannel; the relay, no Helm Python",
    )  # fmt: skip
    bench.record("bridge: 1 MiB result delivered to the page", *result["big"], note="raw QWebChannel")


FLOOD = """(async () => { for (let k = 0; k < 5; k++) {
  const rs = await Promise.all(Array.from({length: 200}, () => helm.call('c', 'noop', {})));
  if (!rs.every(r => r.ok)) throw rs; } return 0; })()"""


def test_event_loop_lag_under_many_concurrent_calls(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> tuple[float, float]:
        view = make_view(folder, RawAnswers())
        raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.lag")))
        await wait_ready(view)
        await raw.load()
        await evaluate(view, FLOOD, timeout=120)  # warm-up
        await evaluate(raw, FLOOD, timeout=120)
        helm, base = await paired_medians(
            5,
            lambda: worst_loop_lag(lambda: evaluate(view, FLOOD, timeout=120)),
            lambda: worst_loop_lag(lambda: evaluate(raw, FLOOD, timeout=120)),
        )
        await view.aclose()
        raw.close()
        return helm, base

    helm, raw = run(scenario(), timeout=600)
    bench.record(
        "UI: worst event-loop lag, 5 x 200 concurrent calls", helm, raw, note="raw QWebChannel, same flood"
    )


POLL_MS = 1000
"""Each poller's period: the broker's rate limit, 60 calls a minute per frame."""
BIG_READS = 10
QUARTER = 256 * 1024 - 64
"""One file of the 1 MiB result (the files kind reads files up to 256 KiB)."""
DASHBOARD_FILES = {**{f"big{i}.txt": "x" * QUARTER for i in range(4)}, "small.txt": "poll"}
FILES_MANIFEST = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.txt"],
    "operations": ["read"],
}


def _big_reads(call: str) -> str:
    return f"""(async () => {{ for (let i = 0; i < {BIG_READS}; i++) {{
      const r = await {call}; if (!r.ok) throw JSON.stringify(r.error); }} return 0; }})()"""


def _poll(call: str) -> str:
    return f"(window.__poll = setInterval(() => {call}, {POLL_MS}), true)"


HELM_BIG = _big_reads("helm.call('notes', 'read', {paths: ['big0.txt', 'big1.txt', 'big2.txt', 'big3.txt']})")
HELM_POLL = _poll("helm.call('notes', 'read', {path: 'small.txt'})")
RAW_BIG = _big_reads("helm.call('notes', 'big', {})")
RAW_POLL = _poll("helm.call('notes', 'poll', {})")


async def _dashboard_lag(frames: list[Any], big: str, poll: str) -> float:
    """Worst loop lag while frames[0] receives 1 MiB results and the others poll."""
    for frame in frames[1:]:
        await evaluate(frame, poll)
    try:
        return await worst_loop_lag(lambda: evaluate(frames[0], big, timeout=120))
    finally:
        for frame in frames[1:]:
            await evaluate(frame, "(clearInterval(window.__poll), true)")


async def _helm_dashboard(tmp_path: Path, folder: Path) -> float:
    root = tmp_path / "root"
    root.mkdir()
    for name, text in DASHBOARD_FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    manifest = manifest_dict([FILES_MANIFEST], id="com.example.dashboard")
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    async with new_broker(tmp_path / "home") as broker:
        add_workspace(broker.home, "ws", root)
        install(broker.home, "ws", folder)
        await review_and_approve(broker, "ws", manifest["id"])
        views = [make_view(folder, broker, extension=manifest["id"], instance=f"dash-{i}") for i in range(4)]
        for view in views:
            view.show()
            await wait_ready(view)
        lag = await median_of(3, lambda: _dashboard_lag(views, HELM_BIG, HELM_POLL))
        for view in views:
            await view.aclose()
        return lag


async def _raw_dashboard(folder: Path) -> float:
    frames = [RawFrame(ExtensionProfile(folder, extension_host("ws", f"raw.dash{i}"))) for i in range(4)]
    for frame in frames:
        frame.web.show()
        await frame.load()
    lag = await median_of(3, lambda: _dashboard_lag(frames, RAW_BIG, RAW_POLL))
    for frame in frames:
        frame.close()
    return lag


def test_event_loop_lag_while_a_dashboard_works(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")
    helm = run(_helm_dashboard(tmp_path, folder), timeout=300)
    raw = run(_raw_dashboard(folder), timeout=300)
    bench.record(
        "UI: worst event-loop lag, 1 MiB results + 3 frames polling",
        helm,
        raw,
        note=f"{BIG_READS} x 1 MiB files.read, polls at 1/s; raw QWebChannel",
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
