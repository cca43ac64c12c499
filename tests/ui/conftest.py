"""Screens of the desktop app, offscreen.

Coroutines run on the process's one qasync loop (``tests/qtloop.py``), the one the end-to-end
tests use; the web view's conftest is imported because the engine must be prepared before the
QApplication exists.
"""

from __future__ import annotations

import pytest

from tests.e2e.conftest import QT_NOISE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The offscreen platform's own start-up remarks are not Helm's warnings.
    for item in items:
        if "/tests/ui/" in str(item.path):
            item.add_marker(pytest.mark.qt_log_ignore(*QT_NOISE))
