"""Screens of the desktop app, offscreen.

Coroutines run on the same qasync loop the end-to-end tests use (one per session), driven by a
nested Qt event loop that quits when the coroutine is done; the fixtures live with the web
view's tests because the engine must be prepared before the QApplication exists.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import QT_NOISE, drive, qloop, run, theme

__all__ = ["drive", "qloop", "run", "theme"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The offscreen platform's own start-up remarks are not Helm's warnings.
    for item in items:
        if "/tests/ui/" in str(item.path):
            item.add_marker(pytest.mark.qt_log_ignore(*QT_NOISE))
