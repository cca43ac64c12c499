"""Child process for the per-frame memory benchmark: N frames of one side, then the PSS.

``helm N`` opens N Helm extension frames (each its own extension, so its own profile and
origin), ``raw N`` as many raw channel pages (each on its own profile too, as Helm's), all at
the same size. Once each has loaded and answered a call, and the engine had a moment to
settle, prints ``PSS <MiB>`` of this process and its web engine processes, and exits.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

SETTLE_SECONDS = 2.0
SAMPLES = 3


async def frames(side: str, count: int, folder: Path) -> list[Any]:
    from tests.bench.host_kit import RawAnswers, RawFrame
    from tests.e2e.host.kit import evaluate, make_view, wait_ready
    from ui.host import ExtensionProfile, extension_host

    made: list[Any] = []
    for i in range(count):
        if side == "helm":
            view = make_view(folder, RawAnswers(), extension=f"com.example.frame{i}")
            view.show()
            await wait_ready(view)
            made.append(view)
        else:
            frame = RawFrame(ExtensionProfile(folder, extension_host("ws", f"raw.frame{i}")))
            frame.web.show()
            await frame.load()
            made.append(frame)
        await evaluate(made[-1], "helm.call('c', 'noop', {})")
    return made


async def measure(side: str, count: int) -> None:
    from tests.bench.processes import tree_pss_mib
    from tests.e2e.host.kit import copy_page

    with tempfile.TemporaryDirectory() as tmp:
        made = await frames(side, count, copy_page("probe", Path(tmp) / "ext"))
        await asyncio.sleep(SETTLE_SECONDS)
        samples = []
        for _ in range(SAMPLES):
            samples.append(tree_pss_mib(engine_only=True))
            await asyncio.sleep(0.5)
        print(f"PSS {statistics.median(samples):.1f} ({len(made)} frames)", flush=True)
    os._exit(0)


def main() -> None:
    from ui.host import prepare_engine

    keep = prepare_engine()
    import qasync

    from ui.qt import QApplication

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(measure(sys.argv[1], int(sys.argv[2])))
    keep.close()


if __name__ == "__main__":
    main()
