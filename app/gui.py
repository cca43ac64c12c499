"""Start the desktop app (Qt is imported only from here on).

The composition root of the GUI: engine set-up before the QApplication, one qasync loop for
the life of the process (the Qt event loop is entered once), the broker on the Helm home, the
demo workspace for a user who has none, and the window.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from app.commands.common import home_path
from app.demo import needs_demo, set_up_demo
from broker import Broker
from broker.credentials import open_store


def main(args: argparse.Namespace) -> int:
    return run_qt(lambda: run(args))


def run_qt(body: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run ``body`` on the process's one qasync loop and return its exit code.

    The web engine is prepared before the QApplication exists (the extension scheme and the
    WebRTC flags must be set first), and the Qt event loop is entered exactly once.
    """
    from ui.host import prepare_engine
    from ui.host.egress_check import ENGINE_CHECK

    dead_end = prepare_engine()
    import qasync

    from ui.qt import QApplication

    app = QApplication(sys.argv[:1])
    app.setApplicationName("Helm")
    # The loop ends when ``body`` returns, after the broker has closed its children; Qt must
    # not stop it early when the window closes.
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def checked() -> int:
        ENGINE_CHECK.start()  # the frames' start-up check, while the rest of Helm starts
        return await body()

    try:
        with loop:
            code: int = loop.run_until_complete(checked())
            return code
    finally:
        dead_end.close()


async def run(args: argparse.Namespace) -> int:
    from app.window import open_window

    path = home_path(args)
    async with Broker(path, credentials=open_store(path)) as broker:
        if needs_demo(broker):
            await set_up_demo(broker)
        window = open_window(broker)
        try:
            await window.closed.wait()
            return 0
        finally:
            await window.aclose()
