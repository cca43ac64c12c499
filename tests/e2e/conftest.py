"""The real web view, headless: engine set-up before the QApplication exists.

pytest-qt owns the one QApplication; this module is imported before it exists, which is when
the ``helm-ext`` scheme must be registered and the engine's own connections closed. Every tree
that drives Qt imports it for that. The asyncio loop and the ``run`` and ``theme`` fixtures are
the process's own, in ``tests/qtloop.py``.
"""

from __future__ import annotations

import pytest

from ui.host import prepare_engine

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
