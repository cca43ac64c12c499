"""Child process for the memory benchmark: the PSS of a whole process tree once its pages are up.

``helm HOME N``: the desktop start (app.gui) on a home whose dashboard has N widgets, each its
own extension. ``raw DIR N``: N bare QWebEngineView pages with a QWebChannel each, side by
side in one window, serving DIR on a custom scheme from one profile. Once every page is ready
and every call answered, prints ``PSS <MiB of this process and its web engine processes>`` and
``ALL <MiB with every other child too>`` (the demo's MCP servers), then exits.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from tests.bench.processes import tree_pss_mib

SAMPLES = 3
SAMPLE_SECONDS = 0.5
SETTLE_SECONDS = 1.0
"""After the last answer, how long pages get to lay out and paint before the first sample."""


async def report() -> None:
    await asyncio.sleep(SETTLE_SECONDS)
    engine, everything = [], []
    for _ in range(SAMPLES):
        engine.append(tree_pss_mib(engine_only=True))
        everything.append(tree_pss_mib())
        await asyncio.sleep(SAMPLE_SECONDS)
    print(f"PSS {statistics.median(engine):.1f}", flush=True)
    print(f"ALL {statistics.median(everything):.1f}", flush=True)
    os._exit(0)


def helm(home: Path, count: int) -> None:
    from app.cli import desktop_args
    from app.gui import desktop

    args = desktop_args(["--home", str(home)])
    assert args is not None
    waiting: list[asyncio.Task[None]] = []

    async def measure(window: Any) -> None:
        assert await window.wait_ready(count, 120), "the widgets did not load"
        async with asyncio.timeout(60):
            while any(view.bridge.in_flight for view in window.ready_frames):
                await asyncio.sleep(0.05)
        await report()

    desktop(args, lambda window: waiting.append(asyncio.ensure_future(measure(window))))


def raw(folder: Path, count: int) -> None:
    import qasync
    from PySide6.QtCore import QUrl
    from PySide6.QtWebChannel import QWebChannel
    from PySide6.QtWebEngineCore import QWebEngineProfile, QWebEngineUrlScheme
    from PySide6.QtWebEngineWidgets import QWebEngineView
    from PySide6.QtWidgets import QApplication, QHBoxLayout, QScrollArea, QWidget

    from tests.bench.raw_page import FolderHandler, RawObject, raw_script

    scheme = QWebEngineUrlScheme(b"bench")
    scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    QWebEngineUrlScheme.registerScheme(scheme)
    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    profile = QWebEngineProfile(app)
    handler = FolderHandler(folder, profile)
    profile.installUrlSchemeHandler(b"bench", handler)
    window = QScrollArea()
    window.resize(1200, 760)
    window.setWidgetResizable(True)
    inner = QWidget()
    row = QHBoxLayout(inner)
    keep: list[Any] = []

    async def show() -> None:
        loaded = []
        for _ in range(count):
            view = QWebEngineView(profile, inner)
            view.setMinimumSize(320, 240)
            view.page().scripts().insert(raw_script())
            channel, obj = QWebChannel(view.page()), RawObject()
            channel.registerObject("raw", obj)
            view.page().setWebChannel(channel)
            future = asyncio.get_running_loop().create_future()
            view.loadFinished.connect(lambda ok, f=future: f.done() or f.set_result(ok))
            row.addWidget(view)
            keep.append((view, channel, obj))
            loaded.append(future)
        window.setWidget(inner)
        window.show()
        for view, *_ in keep:
            view.load(QUrl("bench://x/index.html"))
        assert all(await asyncio.wait_for(asyncio.gather(*loaded), 120))
        await report()

    with loop:
        loop.run_until_complete(show())


if __name__ == "__main__":
    {"helm": helm, "raw": raw}[sys.argv[1]](Path(sys.argv[2]), int(sys.argv[3]))
