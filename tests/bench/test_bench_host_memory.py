"""Memory of the extension host against raw web pages in the same run.

Rows: the memory each further extension frame adds (Helm frames against raw channel pages of
the same size, in this process), and the whole process tree (Helm and its web engine
processes) with the demo's 4 widgets and with 8, against the same number of raw pages in a
process of their own. Memory is proportional set size (PSS), so a library shared by several
processes is counted once in all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.demo import EXTENSIONS, set_up_demo
from broker.extensions import approve, install
from tests.bench.conftest import Bench
from tests.bench.host_kit import RawFrame, tree_pss_mib
from tests.e2e.conftest import QT_NOISE, qloop  # noqa: F401 (fixture; engine set-up)
from tests.e2e.conftest import run as run
from tests.e2e.host.kit import EchoHandler, copy_page, evaluate, make_view, wait_ready
from tests.helpers import new_broker
from ui.host import ExtensionProfile, extension_host

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

ROOT = Path(__file__).resolve().parents[2]
FRAMES = 4


def test_memory_per_extension_frame(run: Any, bench: Bench, tmp_path: Path) -> None:
    folder = copy_page("probe", tmp_path / "ext")

    async def scenario() -> tuple[float, float]:
        # One frame of each kind first, kept open, so the engine's shared processes (browser
        # side, GPU, compositor) are paid before either side is measured. Then raw pages, left
        # open, and Helm frames on top: no process of the other side is still shutting down.
        # Every frame is shown at the same size: what the engine keeps per frame grows with it.
        warm_view = make_view(folder, EchoHandler(), extension="com.example.warm")
        warm_view.show()
        await wait_ready(warm_view)
        warm_raw = RawFrame(ExtensionProfile(folder, extension_host("ws", "raw.warm")))
        warm_raw.web.show()
        await warm_raw.load()
        before = tree_pss_mib()
        frames = []
        for i in range(FRAMES):
            frame = RawFrame(ExtensionProfile(folder, extension_host("ws", f"raw.mem{i}")))
            frame.web.show()
            await frame.load()
            await evaluate(frame, "helm.call('c', 'noop', {})")
            frames.append(frame)
        raw = (tree_pss_mib() - before) / FRAMES
        before = tree_pss_mib()
        views = []
        for i in range(FRAMES):
            view = make_view(folder, EchoHandler(), extension=f"com.example.mem{i}")
            view.show()
            await wait_ready(view)
            await evaluate(view, "helm.call('c', 'noop', {})")
            views.append(view)
        helm = (tree_pss_mib() - before) / FRAMES
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
        note=f"{FRAMES} frames vs raw channel pages, 640x480 each",
    )


def _tree(mode: str, target: Path, count: int) -> dict[str, float]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-m", "tests.bench.host_tree", mode, str(target), str(count)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=True,
        cwd=ROOT,
    ).stdout
    figures = dict(line.split() for line in out.splitlines() if line.startswith(("PSS", "ALL")))
    assert set(figures) == {"PSS", "ALL"}, out
    return {name: float(value) for name, value in figures.items()}


async def _demo_with(home: Path, count: int) -> None:
    """The demo, and as many more widgets (copies of its own, as other extensions) as it takes
    to have ``count`` on the dashboard."""
    async with new_broker(home) as broker:
        workspace = await set_up_demo(broker)
        extensions = home / "demo" / "extensions"
        for n in range(count - len(EXTENSIONS)):
            name = EXTENSIONS[n % len(EXTENSIONS)]
            folder = extensions / f"{name}-{n}"
            shutil.copytree(extensions / name, folder)
            manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
            manifest["id"] = f"{manifest['id']}{n}"
            (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
            install(broker.home, workspace, folder)
            await approve(broker, workspace, manifest["id"])


@pytest.mark.parametrize("count", [4, 8])
def test_memory_of_the_whole_process_tree(run: Any, bench: Bench, tmp_path: Path, count: int) -> None:
    home = tmp_path / "home"
    run(_demo_with(home, count))
    helm = _tree("helm", home, count)
    raw = _tree("raw", home / "demo" / "extensions" / EXTENSIONS[0], count)
    bench.record(
        f"memory: process tree with {count} widgets (PSS)",
        helm["PSS"],
        raw["PSS"],
        unit="MiB",
        note=f"Helm + engine vs {count} raw pages; with the demo's servers: {helm['ALL']:.0f} MiB",
    )
