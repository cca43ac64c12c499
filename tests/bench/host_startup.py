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
``ALL 7`` every one); ``... rawqt DIR SPAWNED`` is the raw page once PySide6 has made every Qt
class Helm's modules name (``ui.qt`` imported first).

``... timeline HOME SPAWNED`` is the ``helm`` start with every milestone on the way, for a
person looking for where a start's time goes: the window's frame shown and painted (``FRAMED``,
``PAINTED``), the start-up check's verdict (``CHECKED``), Helm's window opened, painted in the
frame (``CONTENT``) and filled (its frames made), the first frame ready and every dashboard frame
ready (``ALL``). For example, from the repository root::

    python -m tests.bench.host_startup timeline ~/.helm "$(python3 -c 'import time; print(time.monotonic())')"
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

SPAWNED = float(sys.argv[3])


def milestone(name: str) -> None:
    print(f"{name} {time.monotonic() - SPAWNED:.4f}", flush=True)


def ready() -> None:
    milestone("READY")
    os._exit(0)


def raw(folder: Path, pages: int = 1) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtWebEngineCore import QWebEngineProfile, QWebEngineUrlScheme
    from PySide6.QtWebEngineWidgets import QWebEngineView
    from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

    from tests.bench.raw_page import FolderHandler

    scheme = QWebEngineUrlScheme(b"bench")
    scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    QWebEngineUrlScheme.registerScheme(scheme)
    app = QApplication(sys.argv[:1])

    class Window(QWidget):
        painted = False

        def paintEvent(self, event):  # type: ignore[no-untyped-def]
            super().paintEvent(event)
            if not self.painted:
                self.painted = True
                milestone("PAINTED")

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
    handlers, views = [], []
    for _ in range(pages):
        profile = QWebEngineProfile(app)
        handlers.append(FolderHandler(folder, profile))  # kept: a collected handler hangs loads
        profile.installUrlSchemeHandler(b"bench", handlers[-1])
        views.append(QWebEngineView(profile, window))
        layout.addWidget(views[-1])
        views[-1].loadFinished.connect(lambda _ok: finished())
    window.show()
    for view in views:
        view.load(QUrl("bench://x/index.html"))
    app.exec()


def raw_seven(folder: Path) -> None:
    """The raw side of the demo dashboard's start: seven pages, each on a profile of its own,
    started together (the demo home has seven widgets)."""
    raw(folder, pages=7)


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


MODES = {"helm": helm, "raw": raw, "raw7": raw_seven, "rawqt": raw_qt, "timeline": timeline}

if __name__ == "__main__":
    MODES[sys.argv[1]](Path(sys.argv[2]))
