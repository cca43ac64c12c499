"""The real web view, headless: engine set-up before the QApplication, and an asyncio loop.

pytest-qt owns the one QApplication; this module is imported before it exists, which is when
the ``helm-ext`` scheme must be registered and the engine's own connections closed. Coroutines run on a qasync
loop marked as already running, each driven by a nested Qt event loop that quits when it is
done (the application's own ``exec()`` is entered at most once per process).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
import qasync

from ui.host import prepare_engine
from ui.preferences import Preferences
from ui.qt import QApplication, QEventLoop, Qt, QTimer
from ui.theme import Theme

_DEAD_END = prepare_engine()

# Chromium and the offscreen platform say these on every start; they are not Helm's warnings.
QT_NOISE = (
    r"QRhiGles2: .*",
    r"Failed to create RHI .*",
    r"This plugin does not support .*",
    r"QVulkanInstance: .*",
    r"GBM is not supported .*",
    r"GPUInfo not initialized .*",
    r"(Screen|Window) capturing is not available.*",
    r"Release of profile requested but WebEnginePage still not deleted.*",
)


def pytest_unconfigure() -> None:
    # The dead end is held for the whole run; no page loads after it, so let its port go.
    _DEAD_END.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/e2e/" in str(item.path) or "/bench/" in str(item.path):
            item.add_marker(pytest.mark.qt_log_ignore(*QT_NOISE))


@pytest.fixture(scope="session")
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    loop = qasync.QEventLoop(qapp, already_running=True)
    # An executor the session owns, so its threads end before Qt tears down (asyncio.to_thread
    # work in the broker runs there).
    executor = qasync.QThreadExecutor(4)
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    yield loop
    executor.shutdown(wait=True)
    # Helm's own copies are QMimeData objects made in Python: emptied now, Qt would delete the
    # last one at process exit, after Python has gone, and crash.
    qapp.clipboard().clear()


def drive[T](loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    """Run ``coro`` on the qasync loop inside a nested Qt event loop; fail after ``timeout``."""
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
    theme = Theme.of(qapp)
    theme.follow(Preferences())
    yield theme
    qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Unknown)
    theme.follow(Preferences())
