"""Start-up of the extension host against a bare web view in the same run.

Rows: a new extension frame to ready (in a running Helm, against a raw channel page), and a
cold start to the main window painted and to the first extension ready: the desktop start on
the demo home (``helm --home``, in a child process) against a bare QWebEngineView page in a
plain window. Both children run with their bytecode cached, as a user's second start would.
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
    milestones = dict(line.split() for line in out.splitlines() if line.startswith(("PAINTED", "READY")))
    assert set(milestones) == {"PAINTED", "READY"}, out
    return {name: float(value) for name, value in milestones.items()}


def _median_start(mode: str, target: Path, cache: Path) -> dict[str, float]:
    _cold_start(mode, target, cache)  # writes the bytecode cache; not counted
    runs = [_cold_start(mode, target, cache) for _ in range(COLD_RUNS)]
    return {name: statistics.median(r[name] for r in runs) for name in ("PAINTED", "READY")}


def test_cold_start_to_first_extension_ready(run: Any, bench: Bench, tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def set_up() -> None:
        async with new_broker(home) as broker:
            await set_up_demo(broker)

    run(set_up())
    folder = copy_page("probe", tmp_path / "raw")
    helm = _median_start("helm", home, tmp_path / "pycache")
    raw = _median_start("raw", folder, tmp_path / "pycache")
    bench.record(
        "start-up: process start to main window painted",
        helm["PAINTED"],
        raw["PAINTED"],
        note="demo home vs a window with a bare QWebEngineView",
    )
    bench.record(
        "start-up: process start to first extension ready",
        helm["READY"],
        raw["READY"],
        note="demo home vs bare QWebEngineView page",
    )
