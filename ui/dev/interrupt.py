"""Ctrl+C and SIGTERM end a terminal-started Qt session cleanly, at once.

Python runs a signal handler only when the interpreter gets control, and a Qt event loop may
wait in C for a long time. The signal's wake-up byte goes to a socket Qt watches, so the loop
wakes, Python runs, and ``stop`` is called: the session closes its window and broker the same
way as when the window is closed, instead of dying with pages and server children open.
"""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Callable, Iterator
from types import FrameType

from ui.qt import QSocketNotifier

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def interrupts(stop: Callable[[], None]) -> Iterator[None]:
    """While inside: SIGINT and SIGTERM call ``stop`` (on the Qt thread) instead of their default."""
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(lambda *_: _drain(reader))

    def handler(_number: int, _frame: FrameType | None) -> None:
        stop()

    previous_fd = signal.set_wakeup_fd(writer.fileno())
    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        reader.close()
        writer.close()


def _drain(reader: socket.socket) -> None:
    with contextlib.suppress(BlockingIOError, OSError):
        while reader.recv(64):
            pass
