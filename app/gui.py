"""Start the desktop app (Qt is imported only from here on).

The composition root of the GUI, in the order that gets a window on the screen soonest: the
engine set-up and the QApplication first, then the frames' start-up check, which needs nothing
else; then the main window's frame (``ui.shell``), in the user's look, while the rest of Helm is
imported in a worker thread; then the broker on the Helm home and the window, put in that frame.
The keychain is looked up once the dashboard's frames are ready (nothing reads a secret before,
and a use before starts it), and the demo workspace is set up, for a user who has none, in the
window already showing; the frames load when the check has passed. The Qt event loop is entered
once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from app.window import Window
    from ui.shell import WindowShell


def main(args: argparse.Namespace) -> int:
    return desktop(args)


def desktop(
    args: argparse.Namespace,
    opened: Callable[[Window], object] | None = None,
    framed: Callable[[WindowShell], object] | None = None,
) -> int:
    """The desktop (``run``) on the process's one loop; it starts the check itself."""
    return run_qt(lambda: run(args, opened, framed), check=False)


def run_qt(body: Callable[[], Coroutine[Any, Any, int]], *, check: bool = True) -> int:
    """Run ``body`` on the process's one qasync loop and return its exit code.

    The web engine is prepared before the QApplication exists (the extension scheme and the
    WebRTC flags must be set first), and the Qt event loop is entered exactly once. The frames'
    start-up check starts before ``body``; with ``check=False``, ``body`` starts it itself (the
    desktop, once its window's frame is painted: the engine's own start would hold the paint).
    """
    from ui.host import prepare_engine

    dead_end = prepare_engine()
    import qasync

    from ui.qt import QApplication

    app = QApplication(sys.argv[:1])
    app.setApplicationName("Helm")
    # Wayland names a window's application by this: its launcher (helm.desktop) and its icon.
    app.setDesktopFileName("helm")
    # The loop ends when ``body`` returns, after the broker has closed its children; Qt must
    # not stop it early when the window closes.
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def checked() -> int:
        try:
            if check:
                await start_check()
            return await body()
        finally:
            from ui.host.egress_check import ENGINE_CHECK  # here: nothing of it before the paint

            await ENGINE_CHECK.aclose()  # its canary's port closed before the loop is

    try:
        with loop:
            code: int = loop.run_until_complete(checked())
            return code
    finally:
        dead_end.close()


async def start_check() -> None:
    """Start the frames' start-up check, and give it one turn of the loop: its probe page starts
    loading (in the engine's own threads and processes) before the caller goes on."""
    from ui.host.egress_check import ENGINE_CHECK

    ENGINE_CHECK.start()
    await asyncio.sleep(0)


FRAME_WITHIN_SECONDS = 0.2
"""Longest the start-up check waits for the window's frame to be painted."""


async def run(
    args: argparse.Namespace,
    opened: Callable[[Window], object] | None = None,
    framed: Callable[[WindowShell], object] | None = None,
) -> int:
    """The desktop on the home ``args`` names; ``framed`` is told when the window's frame
    shows, ``opened`` when the window does, in it."""
    from broker.settings import Home
    from ui.shell import WindowShell

    path = Home.chosen_path(getattr(args, "home", None))
    shell = WindowShell(path)
    gone = asyncio.Event()  # the frame closed before a window was put in it
    shell.closing.connect(gone.set)
    painted = asyncio.Event()
    shell.painted.connect(painted.set)
    shell.show()
    if framed is not None:
        framed(shell)
    try:
        # The frame first: the engine's start (the check's page) holds the loop for a while.
        with contextlib.suppress(TimeoutError):  # not painted (minimised, on no screen)
            await asyncio.wait_for(painted.wait(), FRAME_WITHIN_SECONDS)
        await start_check()
        # Helm's modules are imported in a worker thread: meanwhile the event loop serves the
        # start-up check's page.
        await asyncio.to_thread(importlib.import_module, "app.window")
        return 0 if gone.is_set() else await _desktop(path, shell, gone, opened)
    finally:
        shell.deleteLater()


async def _desktop(
    path: Path, shell: WindowShell, gone: asyncio.Event, opened: Callable[[Window], object] | None
) -> int:
    from app.demo import needs_demo
    from app.keychain import OpeningStore
    from app.window import open_window
    from broker import Broker
    from broker.credentials import open_store

    credentials = OpeningStore(lambda: open_store(path))
    async with Broker(path, credentials=credentials) as broker:
        if gone.is_set():
            return 0
        new_user = needs_demo(broker)
        window = open_window(broker, fill=not new_user, shell=shell)
        # The keychain once the dashboard's frames are ready: its lookup (keyring's imports and
        # D-Bus) would take the cores the frames' renderers start on. A use before starts it at
        # once.
        tasks = window.window.tasks
        window.window.filled.connect(lambda: tasks.start(after_frames(window, credentials.start)))
        if opened is not None:
            opened(window)
        try:
            if new_user:
                await set_up_demo(window)
            await until_closed(window.closed)
            return 0
        finally:
            await window.aclose()


KEYCHAIN_AFTER_SECONDS = 10.0
"""Longest the keychain's lookup waits for the dashboard's frames (one may never be ready)."""


async def after_frames(window: Window, start: Callable[[], None]) -> None:
    """``start()`` once every frame of the filled dashboard is ready, or after a while."""
    await window.wait_ready(len(window.window.dashboard.cards), KEYCHAIN_AFTER_SECONDS)
    start()


async def until_closed(closed: asyncio.Event) -> None:
    """Until the window closes, or Helm gets SIGINT or SIGTERM, which close it the same way: the
    broker's children and every agent (with all it started) are stopped, not left running."""
    from ui.dev.interrupt import interrupts

    with interrupts(closed.set):
        await closed.wait()


async def set_up_demo(window: Window) -> None:
    """The demo workspace for a user who has none, set up once the (empty) window is on the
    screen (setting it up keeps the loop busy); the window is filled in once it is complete."""
    from app import demo
    from app.window import FILL_WITHIN_MS

    await window.wait_painted(FILL_WITHIN_MS / 1000)
    await window.broker.preload(demo.kinds())  # in worker threads, side by side
    await demo.set_up_demo(window.broker)
    window.window.fill()
