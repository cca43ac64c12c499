"""The process's one asyncio loop for Qt-driven tests, and Helm's look around a test.

Coroutines run on a qasync loop marked as already running (the application's own ``exec()`` is
entered at most once per process), each driven by a nested Qt event loop that quits when it is
done. The loop is made once per process: asyncio keeps one running loop per thread, and a qasync
loop marks itself running when it is made, so a second one would take that place from the first,
and every task still driven on the first would find no current task (``asyncio.timeout`` then
fails with "Timeout should be used inside a task"). Hence these fixtures are defined here alone,
registered once by the top-level conftest: a conftest or test module that imports them defines
them again, and pytest keeps a session fixture once per definition.

Qt is imported inside the fixtures, so a run of broker tests alone never loads it; the web
engine is prepared by ``tests/e2e/conftest.py``, which every Qt-driven tree imports.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ui.qt import QApplication
    from ui.theme import Theme


def make_loop(qapp: QApplication) -> asyncio.AbstractEventLoop:
    """A qasync loop on ``qapp``, marked as this thread's running loop; refused if one runs."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is not None:
        raise RuntimeError(
            f"an asyncio loop ({type(running).__name__}) already runs in this thread; the qloop "
            "fixture is defined once, in tests/qtloop.py (do not import it into a conftest or test module)"
        )
    import qasync

    return qasync.QEventLoop(qapp, already_running=True)


@pytest.fixture(scope="session")
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    import qasync

    loop = make_loop(qapp)
    # An executor the session owns, so its threads end before Qt tears down (asyncio.to_thread
    # work in the broker runs there).
    executor = qasync.QThreadExecutor(4)
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    yield loop
    # The process's start-up check, if a test started it: its canary's port is closed now, not
    # at the interpreter's exit should the session end in the check's late window.
    check = sys.modules.get("ui.host.egress_check")
    if check is not None:
        drive(loop, check.ENGINE_CHECK.aclose())
    executor.shutdown(wait=True)
    # Helm's own copies are QMimeData objects made in Python: emptied now, Qt would delete the
    # last one at process exit, after Python has gone, and crash.
    qapp.clipboard().clear()


def drive[T](loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run ``coro`` on the qasync loop inside a nested Qt event loop; fail after ``timeout``."""
    from ui.qt import QEventLoop, QTimer

    task = loop.create_task(coro)
    nested = QEventLoop()
    task.add_done_callback(lambda _: nested.quit())
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(nested.quit)
    timer.start(int(timeout * 1000))
    if not task.done():
        nested.exec()
    timer.stop()
    if not task.done():
        task.cancel()
        raise TimeoutError(f"gave up after {timeout} s")
    return task.result()


@pytest.fixture
def run(qloop: asyncio.AbstractEventLoop) -> Any:
    def runner[T](coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return drive(qloop, coro, timeout)

    return runner


@pytest.fixture
def theme(qapp: QApplication) -> Iterator[Theme]:
    """Helm's look, light and at the system's text size before and after the test."""
    from ui.preferences import Preferences
    from ui.qt import Qt
    from ui.theme import Theme

    theme = Theme.of(qapp)
    theme.follow(Preferences())
    yield theme
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Unknown)
    theme.follow(Preferences())
