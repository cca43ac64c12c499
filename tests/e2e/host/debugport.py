"""Run as a script: Helm's engine set-up, then one real page, then which debugging ports listen.

``python -m tests.e2e.host.debugport PORT...`` prints one line per port: ``PORT open`` or
``PORT closed``, tried once the page has loaded (when a debugging server would be listening).
"""

from __future__ import annotations

import os
import socket
import sys

from ui.host import prepare_engine
from ui.qt import QApplication, QTimer, QUrl, QWebEngineView


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def main(ports: list[int]) -> None:
    dead = prepare_engine()
    app = QApplication(["debugport"])
    view = QWebEngineView()
    view.loadFinished.connect(lambda _ok: app.quit())
    QTimer.singleShot(30_000, app.quit)  # bounded: the answer is printed either way
    view.load(QUrl("data:text/html,<p>page</p>"))
    app.exec()
    for port in ports:
        print(port, "open" if listening(port) else "closed", flush=True)
    dead.close()
    os._exit(0)  # the answer is out; tearing the engine down in a short script only risks a crash


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]])
