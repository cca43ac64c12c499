"""Start an app author's window (``helm dev --server S --app URI``) on Helm's one Qt start-up
(``app.gui.run_qt``): one AppDevWindow until it is closed or Ctrl+C."""

from __future__ import annotations

import argparse
import asyncio

from app.commands.common import open_broker


def run_app_dev(args: argparse.Namespace, workspace: str) -> int:
    from app.gui import run_qt

    return run_qt(lambda: _session(args, workspace))


async def _session(args: argparse.Namespace, workspace: str) -> int:
    from ui.apps.devwindow import AppDevWindow
    from ui.dev.interrupt import interrupts
    from ui.qt import QApplication

    closed = asyncio.Event()
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.lastWindowClosed.connect(closed.set)
    async with open_broker(args) as broker:
        window = AppDevWindow(broker, workspace, args.server, args.app)
        with interrupts(closed.set):
            window.show()
            window.schedule_refresh()
            await closed.wait()
        await window.aclose()
    return 0
