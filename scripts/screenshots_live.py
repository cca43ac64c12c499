"""The screens that need real extension frames: Helm's window on its demo, in the web engine.

Used by ``screenshots.py`` (which prepares the engine before the QApplication exists). The demo
workspace is built in a throw-away home with its real servers; its four widgets load in
sandboxed frames and make their real calls. Then the clock is stopped with the kill switch and
loaded again, so its card shows Helm's error strip above a real frame. The dashboard is shot
again after the system turned dark, the frames following through their CSS variables.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from app.demo import EXTENSIONS, set_up_demo
from app.window import open_window
from broker.broker import Broker
from broker.credentials import FileStore
from ui import extension_tree
from ui.qt import QApplication, Qt, QWidget

Save = Callable[[QWidget, Path, str, tuple[int, int] | None], Awaitable[Path]]
DEMO_IDS = [f"dev.helm.demo.{name}" for name in EXTENSIONS]
CLOCK = "dev.helm.demo.clock"


async def until(done: Callable[[], bool], within: float, what: str) -> None:
    """Wait (polling the loop, this is a script) until ``done()``, or stop with ``what``."""
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what}")
        await asyncio.sleep(0.1)


async def shoot_live(out: Path, root: Path, save: Save) -> list[Path]:
    home = root / "live-home"
    async with Broker(home, credentials=FileStore(home / "credentials.json")) as broker:
        workspace = await set_up_demo(broker)
        window = open_window(broker)
        main = window.window
        try:
            main.resize(1280, 800)
            if not await window.wait_ready(len(DEMO_IDS), 60):
                print("the web engine did not load the demo's frames; live screens skipped", file=sys.stderr)
                return []
            activity = broker.activity

            def settled() -> bool:
                called = {r.extension for r in activity.recent}
                return set(DEMO_IDS) <= called and all(activity.running(workspace, e) == 0 for e in DEMO_IDS)

            await until(settled, 60, "the demo's first calls")
            await asyncio.sleep(1.0)  # let the pages paint what they got
            written = [await save(main, out, "dashboard-live", (1280, 800))]
            written.append(await _dark(out, main, save, "dashboard-live-dark"))
            written += await _stopped(out, main, workspace, save)
            return written
        finally:
            await window.aclose()


async def _dark(out: Path, main: QWidget, save: Save, name: str) -> Path:
    """The same window once the system turned dark: Helm and the frames' CSS variables follow."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    await asyncio.sleep(1.0)  # let the pages paint with the new variables
    path = await save(main, out, name, (1280, 800))
    app.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Unknown)
    await asyncio.sleep(0.5)
    return path


async def _stopped(out: Path, main: QWidget, workspace: str, save: Save) -> list[Path]:
    """The clock stopped with the kill switch and loaded again: its strip, the list, the activity."""
    from ui.main_window import MainWindow

    assert isinstance(main, MainWindow)
    card = next(c for c in main.dashboard.cards if c.frame.manifest.id == CLOCK)
    main.model.stop(workspace, CLOCK)
    main.fill_tree(workspace)
    item = extension_tree.find(main.tree, CLOCK)
    if item is not None:
        main.tree.setCurrentItem(item)
    card.retry()
    await until(card.strip.isVisible, 30, "the clock's error strip")
    await asyncio.sleep(1.0)
    written = [await save(main, out, "dashboard-live-stopped", (1280, 800))]
    written.append(await _dark(out, main, save, "dashboard-live-stopped-dark"))
    main.tabs.setCurrentWidget(main.activity)
    written.append(await save(main, out, "activity-live", (1280, 800)))
    main.tabs.setCurrentWidget(main.dashboard)
    main.model.turn_on(workspace, CLOCK)
    return written
