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
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from app.enginelog import quiet_engine
from broker import Broker
from broker.authoring.fixtures import FixtureBook
from broker.authoring.replay import replay_kinds
from broker.credentials import open_store
from broker.kinds import KINDS
from broker.settings import Home
from broker.workspaces import add_workspace
from ui.dev.terminal import TerminalReport
from ui.dev.window import DevOptions

REPLAY_WORKSPACE = "dev"


@dataclass(frozen=True)
class DevRun:
    """What ``helm dev`` was asked to open, decided before Qt starts."""

    folder: Path
    workspace: str
    home: Path
    options: DevOptions = field(default_factory=DevOptions)


class ReportLines(logging.Handler):
    """Helm's own log records as ``helm`` lines of a terminal report."""

    def __init__(self, report: TerminalReport) -> None:
        super().__init__()
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        self.report.line("helm", record.getMessage())


def run_dev(run: DevRun, verbose: bool) -> int:
    report = TerminalReport(sys.stdout)
    quiet_engine(verbose, ReportLines(report))
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
