"""Child process for the start-up benchmark: milestones from the moment the parent started it.

``python -m tests.bench.host_startup helm HOME SPAWNED``: the desktop start ``helm --home HOME``
runs (app.gui), on a home whose demo is already set up. ``... raw DIR SPAWNED``: a bare
QWebEngineView in a plain window, on a custom scheme serving DIR. ``SPAWNED`` is the parent's
``time.monotonic()`` just before it started this process (the clock is the system's, shared by
both). Prints ``PAINTED <seconds>`` when the window is first painted (Helm's: its frame,
``ui.shell``; then ``CONTENT <seconds>`` when Helm's window is painted in it) and
``READY <seconds>`` when the first page is ready, then exits.

The floors of those two milestones: ``... raw7 DIR SPAWNED`` starts seven raw pages together, each
on a profile of its own, as the demo dashboard starts its seven frames (``READY`` is the first,
``ALL 7`` every one); ``... raw7imported DIR SPAWNED`` starts those seven once the window is
painted and Helm's modules are imported in a worker thread (``IMPORTED``), as Helm's start
imports them before it makes a frame; ``... rawqt DIR SPAWNED`` is the raw page once PySide6 has
made every Qt class Helm's modules name (``ui.qt`` imported first).

``... timeline HOME SPAWNED`` is the ``helm`` start with every milestone on the way, for a
person looking for where a start's time goes: the window's frame shown and painted (``FRAMED``,
``PAINTED``), the start-up check's verdict (``CHECKED``), Helm's window opened, painted in the
frame (``CONTENT``) and filled (its frames made), the first frame ready and every dashboard frame
ready (``ALL``). For example, from the repository root::

    python -m tests.bench.host_startup timeline ~/.helm "$(python3 -c 'import time; print(time.monotonic())')"
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SPAWNED = float(sys.argv[3])


def milestone(name: str) -> None:
    print(f"{name} {time.monotonic() - SPAWNED:.4f}", flush=True)


def ready() -> None:
    milestone("READY")
    os._exit(0)


def raw(folder: Path, pages: int = 1, first: Callable[[], object] | None = None) -> None:
    """The raw window with ``pages`` raw pages; with ``first``, the pages are made and loaded
    only once the window is painted and ``first()`` has run in a worker thread (``IMPORTED``)."""
    from PySide6.QtCore import QObject, QTimer, QUrl, Signal
    from PySide6.QtWebEngineCore import QWebEngineProfile, QWebEngineUrlScheme
    from PySide6.QtWebEngineWidgets import QWebEngineView
    from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

    from tests.bench.raw_page import FolderHandler

    scheme = QWebEngineUrlScheme(b"bench")
    scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    QWebEngineUrlScheme.registerScheme(scheme)
    app = QApplication(sys.argv[:1])

    class Done(QObject):
        done = Signal()

    class Window(QWidget):
        painted = False

        def paintEvent(self, event):  # type: ignore[no-untyped-def]
            super().paintEvent(event)
            if not self.painted:
                self.painted = True
                milestone("PAINTED")
                if first is not None:
                    QTimer.singleShot(0, start_first)

    window = Window()
    window.resize(1200, 760)
    layout = QVBoxLayout(window)
    loaded: list[bool] = []

    def finished() -> None:
        loaded.append(True)
        if len(loaded) == 1:
            milestone("READY")
        if len(loaded) == pages:
            milestone(f"ALL {pages}")
            os._exit(0)

    # One profile per page, as Helm gives each extension its own (and so its own renderer).
    handlers: list[FolderHandler] = []  # kept: a collected handler hangs loads

    def make_views() -> list[QWebEngineView]:
        views = []
        for _ in range(pages):
            profile = QWebEngineProfile(app)
            handlers.append(FolderHandler(folder, profile))
            profile.installUrlSchemeHandler(b"bench", handlers[-1])
            views.append(QWebEngineView(profile, window))
            layout.addWidget(views[-1])
            views[-1].loadFinished.connect(lambda _ok: finished())
        return views

    def load(views: list[QWebEngineView]) -> None:
        for view in views:
            view.load(QUrl("bench://x/index.html"))

    imported = Done()

    def first_done() -> None:
        milestone("IMPORTED")
        load(make_views())

    def start_first() -> None:
        assert first is not None
        imported.done.connect(first_done)  # queued: the thread emits it
        threading.Thread(target=lambda: (first(), imported.done.emit())).start()

    if first is None:
        views = make_views()
        window.show()
        load(views)
    else:
        window.show()
    app.exec()


def raw_seven(folder: Path) -> None:
    """The raw side of the demo dashboard's start: seven pages, each on a profile of its own,
    started together (the demo home has seven widgets)."""
    raw(folder, pages=7)


def raw_seven_after_helm_imports(folder: Path) -> None:
    """A floor of Helm's first ready: the seven raw pages once the window is painted and Helm's
    modules are imported in a worker thread, as the desktop imports them (``app.gui``) before
    it can make a frame. What Helm takes over it is its window, the fill and its frames' own
    work."""
    raw(folder, pages=7, first=lambda: importlib.import_module("app.window"))


def raw_qt(folder: Path) -> None:
    """The raw page after PySide6 has made every Qt class Helm's modules name (``ui.qt``)."""
    import ui.qt  # noqa: F401 - its classes made, nothing else of Helm

    raw(folder)


def helm(home: Path) -> None:
    from app.cli import desktop_args
    from app.gui import desktop

    args = desktop_args(["--home", str(home)])
    assert args is not None
    waiting: list[asyncio.Task[None]] = []

    async def first_frame(window: Any) -> None:
        if await window.wait_ready(1, 60):
            ready()

    def framed(shell: Any) -> None:
        shell.painted.connect(lambda: milestone("PAINTED"))

    def opened(window: Any) -> None:
        window.window.painted.connect(lambda: milestone("CONTENT"))
        waiting.append(asyncio.ensure_future(first_frame(window)))

    desktop(args, opened, framed)


def timeline(home: Path) -> None:
    from app.cli import desktop_args
    from app.gui import desktop
    from ui.host.egress_check import ENGINE_CHECK

    args = desktop_args(["--home", str(home)])
    assert args is not None
    waiting: list[asyncio.Task[None]] = []
    ENGINE_CHECK.when_decided(lambda passed: milestone(f"CHECKED {'passed' if passed else 'failed'}"))

    async def frames(window: Any) -> None:
        if await window.wait_ready(1, 60):
            milestone("READY")
        cards = len(window.window.dashboard.cards)
        if await window.wait_ready(cards, 60):
            milestone(f"ALL {cards}")
        os._exit(0)

    def framed(shell: Any) -> None:
        milestone("FRAMED")
        shell.painted.connect(lambda: milestone("PAINTED"))

    def opened(window: Any) -> None:
        milestone("OPENED")
        window.window.painted.connect(lambda: milestone("CONTENT"))
        window.window.filled.connect(lambda: milestone("FILLED"))
        waiting.append(asyncio.ensure_future(frames(window)))

    desktop(args, opened, framed)


MODES = {
    "helm": helm,
    "raw": raw,
    "raw7": raw_seven,
    "raw7imported": raw_seven_after_helm_imports,
    "rawqt": raw_qt,
    "timeline": timeline,
}

if __name__ == "__main__":
    MODES[sys.argv[1]](Path(sys.argv[2]))
