"""Start author mode (``helm dev DIR``) on Helm's one Qt start-up (``app.gui.run_qt``).

The terminal gets the dev window's lines (``ui.dev.terminal``) and Helm's own warnings; the web
engine's and Qt's own messages — GPU, D-Bus, platform remarks — only with ``--verbose``.
Ctrl+C ends the session as closing the window does. ``--replay`` runs on a temporary Helm
home whose every kind answers from fixtures: no profile, server or approval of the user's own
home is read or changed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from broker import Broker
from broker.authoring.fixtures import FixtureBook
from broker.authoring.replay import replay_kinds
from broker.credentials import open_store
from broker.kinds import KINDS
from broker.settings import Home
from broker.workspaces import add_workspace
from ui.dev.terminal import TerminalReport
from ui.dev.window import DevOptions

FLAGS_VARIABLE = "QTWEBENGINE_CHROMIUM_FLAGS"
QUIET_SWITCH = "--log-level=3"
"""Chromium logs only fatal errors (its own ``ERROR:`` lines about D-Bus, GPU, sandbox…)."""
LOGGING_SWITCHES = ("--log-level", "--enable-logging", "--v=", "--vmodule")

REPLAY_WORKSPACE = "dev"


@dataclass(frozen=True)
class DevRun:
    """What ``helm dev`` was asked to open, decided before Qt starts."""

    folder: Path
    workspace: str
    home: Path
    options: DevOptions = field(default_factory=DevOptions)


def quiet_engine(verbose: bool, report: TerminalReport) -> None:
    """Before Qt starts: Chromium's and Qt's own messages off unless ``verbose``; Helm's own
    warnings (and with ``verbose`` its notes) become ``helm`` lines."""
    handler = _ReportHandler(report)
    handler.setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO if verbose else logging.WARNING)
    if verbose:
        return
    flags = os.environ.get(FLAGS_VARIABLE, "")
    if not any(switch in flags for switch in LOGGING_SWITCHES):  # the user's own choice stays
        os.environ[FLAGS_VARIABLE] = f"{flags} {QUIET_SWITCH}".strip()
    from ui.qt import QtMsgType, qInstallMessageHandler

    def qt_message(kind: Any, _context: Any, message: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            print(message, file=sys.stderr)

    _KEPT.append(qt_message)  # Qt holds no Python reference to it
    qInstallMessageHandler(qt_message)


_KEPT: list[Callable[..., None]] = []


class _ReportHandler(logging.Handler):
    def __init__(self, report: TerminalReport) -> None:
        super().__init__()
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        self.report.line("helm", record.getMessage())


def run_dev(run: DevRun, verbose: bool) -> int:
    report = TerminalReport(sys.stdout)
    quiet_engine(verbose, report)
    from app.gui import run_qt

    return run_qt(lambda: session(run, report))


def run_replay(folder: Path, book: FixtureBook, options: DevOptions, verbose: bool) -> int:
    """``helm dev --replay``: the same session on a temporary home, every kind from ``book``."""
    with tempfile.TemporaryDirectory(prefix="helm-replay-") as tmp:
        home = Path(tmp)
        Home(home).ensure()
        add_workspace(Home(home), REPLAY_WORKSPACE, folder, author_mode=True)
        replayed = dataclasses.replace(options, replay=book)
        return run_dev(DevRun(folder, REPLAY_WORKSPACE, home, replayed), verbose)


def open_dev_broker(run: DevRun) -> Broker:
    book = run.options.replay
    if book is None:
        return Broker(run.home, credentials=open_store(run.home))
    credentials = open_store(run.home, use_keychain=False)  # a temporary home holds no secret
    return Broker(run.home, credentials=credentials, kinds=replay_kinds(book, tuple(KINDS)))


def header(run: DevRun) -> list[str]:
    lines = []
    book = run.options.replay
    if book is None:
        settings = Home(run.home).settings()
        root = settings.workspace(run.workspace).root
        lines.append(f"workspace {run.workspace} (root {root}) in the Helm home {run.home}")
    else:
        lines.append(f"replaying from {book.folder} in a temporary Helm home: no profile or server is used")
    if run.options.record is not None:
        lines.append(f"recording each call's envelope in {run.options.record.folder}")
    if run.options.devtools:
        lines.append("DevTools: in a window of their own (inside Helm; no debugging port is opened)")
    lines.append("Ctrl+C or closing the window ends helm dev")
    return lines


async def session(run: DevRun, report: TerminalReport) -> int:
    from ui.dev.interrupt import interrupts
    from ui.dev.window import DevWindow

    async with open_dev_broker(run) as broker:
        window = DevWindow(broker, run.workspace, run.folder, report=report, options=run.options)
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        with interrupts(closed.set):
            report.lines("helm", header(run))
            window.show()
            await window.refresh()
            await closed.wait()
        await window.aclose()
        window.deleteLater()
    report.line("helm", "helm dev ended")
    return 0
