"""Memory of the extension host against raw web pages in the same run.

Rows: the memory each further extension frame adds (Helm frames against raw channel pages of
the same size, each side in processes of its own), and the whole process tree (Helm and its
web engine processes) with the demo's 4 widgets and with 8, against the same number of raw
pages. Memory is proportional set size (PSS): a library shared by several processes is counted
once in all, so absolute figures also move with what else on the machine maps the same files;
the ratios do not.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.demo import EXTENSIONS, set_up_demo
from broker.extensions import install, review_and_approve
from tests.bench.conftest import Bench
from tests.bench.processes import run_child
from tests.e2e.conftest import QT_NOISE  # engine set-up
from tests.helpers import new_broker

pytestmark = pytest.mark.qt_log_ignore(*QT_NOISE)

FRAMES = 8


def _frames(side: str, count: int) -> float:
    out = run_child(["-m", "tests.bench.host_frames", side, str(count)])
    lines = [line for line in out.splitlines() if line.startswith("PSS")]
    assert lines, out
    return float(lines[0].split()[1])


def test_memory_per_extension_frame(bench: Bench) -> None:
    # Each side in processes of its own (one frame, then one plus FRAMES more): what a frame
    # adds is the difference, with nothing of the other side sharing or still settling.
    helm = (_frames("helm", 1 + FRAMES) - _frames("helm", 1)) / FRAMES
    raw = (_frames("raw", 1 + FRAMES) - _frames("raw", 1)) / FRAMES
    bench.record(
        "memory: per extension frame (PSS, own origin)",
        helm,
        raw,
        unit="MiB",
        note=f"{FRAMES} more frames vs raw channel pages, each on its own profile, 640x480",
    )


def _tree(mode: str, target: Path, count: int) -> dict[str, float]:
    out = run_child(["-m", "tests.bench.host_tree", mode, str(target), str(count)])
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
            await review_and_approve(broker, workspace, manifest["id"])


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
