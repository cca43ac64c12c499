"""Start author mode: the web engine, the application, the qasync loop and one DevWindow."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import qasync

from app.commands.common import open_broker
from ui.dev import DevWindow
from ui.host import prepare_engine
from ui.qt import QApplication


def run_dev(args: argparse.Namespace, workspace: str, folder: Path) -> int:
    dead_end = prepare_engine()  # before the QApplication: the helm-ext scheme, no WebRTC egress
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Helm")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        code: int = loop.run_until_complete(_session(args, workspace, folder, app))
    dead_end.close()  # kept open until the engine is done with it
    return code


async def _session(args: argparse.Namespace, workspace: str, folder: Path, app: QApplication) -> int:
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def last_window_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    async with open_broker(args) as broker:
        window = DevWindow(broker, workspace, folder)
        app.lastWindowClosed.connect(last_window_closed)
        window.show()
        await window.refresh()
        await closed
        await window.aclose()
    return 0
