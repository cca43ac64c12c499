"""Start-up of the extension host against a bare web view in the same run.

Rows: a new extension frame to ready (in a running Helm, against a raw channel page), and a
cold start to the main window painted, to Helm's window painted in it, and to the first
extension ready: the desktop start on the demo home (``helm --home``, in a child process) against
a bare QWebEngineView page in a plain window. Helm's main window is painted first as its frame
(``ui.shell``), before the rest of Helm is imported; its own window then comes in that frame.
Every child runs with its bytecode cached, as a user's second start would.

The floors of the two cold-start rows are rows too: the raw window once it has made every Qt
class Helm's modules name (``ui.qt``); seven raw pages, each on a profile of its own, started
together as the demo dashboard's seven frames are; and those seven once Helm's modules are
imported, as Helm imports them before it can make a frame. Helm's own share is its row against
each.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from app.demo import set_up_demo
from tests.bench.conftest import Bench
from tests.bench.host_kit import RawFrame
from tests.bench.processes import run_child
from tests.e2e.conftest import QT_NOISE  # engine set-up
from tests.e2e.host.kit import EchoHandler, copy_page, make_view, wait_ready
from tests.helpers import new_broker
from ui.host import ExtensionProfile, extension_host

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

COLD_RUNS = 5
MILESTONES = ("PAINTED", "CONTENT", "READY")
"""The window painted (for Helm, its frame: ``ui.shell``), Helm's window painted in that frame, and
the first page ready."""


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


def _cold_start(mode: str, target: Path, cache: Path) -> dict[str, float]:
    """The milestones a child reports, in seconds since it was started."""
    out = run_child(
        ["-m", "tests.bench.host_startup", mode, str(target), repr(time.monotonic())],
        env={"PYTHONPYCACHEPREFIX": str(cache)},
        unset=("PYTHONDONTWRITEBYTECODE",),
        timeout=120,
    )
    milestones = dict(line.split() for line in out.splitlines() if line.startswith(MILESTONES))
    assert {"PAINTED", "READY"} <= set(milestones) and (mode == "helm") == ("CONTENT" in milestones), out
    return {name: float(value) for name, value in milestones.items()}


def _median_starts(sides: dict[str, tuple[str, Path]], cache: Path) -> dict[str, dict[str, float]]:
    """Each side's median milestones; the sides start in turns, so a busy moment of the machine
    falls on all of them alike."""
    for mode, target in sides.values():
        _cold_start(mode, target, cache)  # writes the bytecode cache; not counted
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    for _ in range(COLD_RUNS):
        for side, (mode, target) in sides.items():
            runs[side].append(_cold_start(mode, target, cache))
    return {
        side: {name: statistics.median(r[name] for r in found) for name in found[0]}
        for side, found in runs.items()
    }


def test_cold_start_to_first_extension_ready(run: Any, bench: Bench, tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def set_up() -> None:
        async with new_broker(home) as broker:
            await set_up_demo(broker)

    run(set_up())
    folder = copy_page("probe", tmp_path / "raw")
    starts = _median_starts(
        {
            "helm": ("helm", home),
            "raw": ("raw", folder),
            "raw seven": ("raw7", folder),  # the demo dashboard's seven frames, raw
            "raw with Helm's Qt": ("rawqt", folder),  # every Qt class Helm names made first
            "Helm's imports, raw seven": ("raw7imported", folder),  # then the seven raw pages
        },
        tmp_path / "pycache",
    )
    helm, raw, seven, qt = starts["helm"], starts["raw"], starts["raw seven"], starts["raw with Helm's Qt"]
    imported = starts["Helm's imports, raw seven"]
    bench.record(
        "start-up: process start to main window painted",
        helm["PAINTED"],
        raw["PAINTED"],
        note="demo home's window frame vs a window with a bare QWebEngineView",
    )
    bench.record(
        "start-up: process start to Helm's window painted in its frame",
        helm["CONTENT"],
        raw["PAINTED"],
        note="demo home, its window (still empty) vs the bare raw window",
    )
    bench.record(
        "start-up: process start to first extension ready",
        helm["READY"],
        raw["READY"],
        note="demo home vs bare QWebEngineView page",
    )
    # The floors: what the raw side costs once it makes the Qt classes Helm's window is built
    # of, and once it starts as many pages as the demo dashboard has frames; then Helm's own
    # share over each.
    bench.record(
        "start-up floor: raw window with Helm's Qt classes to painted",
        qt["PAINTED"],
        raw["PAINTED"],
        note="ui.qt imported first vs the bare raw window",
    )
    bench.record(
        "start-up: painted, vs the raw window with Helm's Qt classes",
        helm["PAINTED"],
        qt["PAINTED"],
        note="demo home vs the floor above",
    )
    bench.record(
        "start-up floor: seven raw pages started together to first ready",
        seven["READY"],
        raw["READY"],
        note="seven pages, a profile each, vs one",
    )
    bench.record(
        "start-up: first extension ready, vs seven raw pages",
        helm["READY"],
        seven["READY"],
        note="demo home (seven frames) vs the floor above",
    )
    # Helm makes its frames once its modules are imported: with those imports first, the seven
    # raw pages are what Helm's start could be at best, were its window, fill and frames free.
    bench.record(
        "start-up floor: Helm's imports, then seven raw pages, to first ready",
        imported["READY"],
        raw["READY"],
        note="app.window imported after the paint, as Helm does, then seven pages, vs one page",
    )
    bench.record(
        "start-up: first extension ready, vs Helm's imports and seven raw pages",
        helm["READY"],
        imported["READY"],
        note="demo home (seven frames) vs the floor above",
    )
