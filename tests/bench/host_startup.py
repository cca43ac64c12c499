"""Child process for the start-up benchmark: time from interpreter start to the first frame ready.

``helm HOME``: Helm's GUI start on a Helm home (the demo is set up first if the home is new;
the benchmark sets it up beforehand so it is not counted). ``raw DIR``: a bare QWebEngineView
on a custom scheme serving DIR. Prints ``READY <seconds>`` and exits at once.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

START = time.perf_counter()


def ready() -> None:
    print(f"READY {time.perf_counter() - START:.4f}", flush=True)
    os._exit(0)


def raw(folder: Path) -> None:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QUrl
    from PySide6.QtWebEngineCore import (
        QWebEngineProfile,
        QWebEngineUrlScheme,
        QWebEngineUrlSchemeHandler,
    )
    from PySide6.QtWebEngineWidgets import QWebEngineView
    from PySide6.QtWidgets import QApplication

    scheme = QWebEngineUrlScheme(b"bench")
    scheme.setSyntax(QWebEngineUrlScheme.Syntax.Host)
    QWebEngineUrlScheme.registerScheme(scheme)
    app = QApplication(sys.argv[:1])

    class Handler(QWebEngineUrlSchemeHandler):
        def requestStarted(self, job):  # type: ignore[no-untyped-def]
            data = (folder / (job.requestUrl().path().lstrip("/") or "index.html")).read_bytes()
            buf = QBuffer(job)
            buf.setData(QByteArray(data))
            buf.open(QIODevice.OpenModeFlag.ReadOnly)
            job.reply(b"text/html", buf)

    profile = QWebEngineProfile(app)
    handler = Handler(profile)
    profile.installUrlSchemeHandler(b"bench", handler)
    view = QWebEngineView(profile)
    view.loadFinished.connect(lambda _ok: ready())
    view.show()
    view.load(QUrl("bench://x/index.html"))
    app.exec()


def helm(home: Path) -> None:
    from ui.host import prepare_engine

    prepare_engine()
    import qasync

    from app.window import open_window
    from broker import Broker
    from broker.credentials import open_store
    from ui.qt import QApplication

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)

    async def run() -> None:
        async with Broker(home, credentials=open_store(home, use_keychain=False)) as broker:
            window = open_window(broker)
            await window.wait_ready(1, 60)
            ready()

    with loop:
        loop.run_until_complete(run())


if __name__ == "__main__":
    {"helm": helm, "raw": raw}[sys.argv[1]](Path(sys.argv[2]))
