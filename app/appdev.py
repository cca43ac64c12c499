"""Start an app author's window (``helm dev --server S --app URI``): the engine, the
application, the qasync loop and one AppDevWindow."""

from __future__ import annotations

import argparse
import asyncio
import sys

import qasync

from app.commands.common import open_broker
from ui.apps.devwindow import AppDevWindow
from ui.host import prepare_engine
from ui.qt import QApplication


def run_app_dev(args: argparse.Namespace, workspace: str) -> int:
    dead_end = prepare_engine()  # before the QApplication: the helm-ext scheme, the engine's network closed
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Helm")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        code: int = loop.run_until_complete(_session(args, workspace, app))
    dead_end.close()  # kept open until the engine is done with it
    return code


async def _session(args: argparse.Namespace, workspace: str, app: QApplication) -> int:
    closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def last_window_closed() -> None:
        if not closed.done():
            closed.set_result(None)

    app.lastWindowClosed.connect(last_window_closed)
    async with open_broker(args) as broker:
        window = AppDevWindow(broker, workspace, args.server, args.app)
        window.show()
        window.schedule_refresh()
        await closed
        await window.aclose()
    return 0
