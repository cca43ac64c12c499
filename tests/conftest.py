"""Test-wide set-up: the real-server fixtures and a headless Qt environment."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Qt reads these when the first QApplication starts: headless, and Chromium's sandbox cannot
# run as root (CI runs as root). scripts/check.sh sets them too; this covers a bare `pytest`.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.geteuid() == 0 and "--no-sandbox" not in os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", ""):
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = (
        os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "") + " --no-sandbox"
    ).strip()

# Property-based tests: no example database on disk (nothing to keep out of the repository), and
# under CI a derandomized run, so a red run can be reproduced exactly from the same commit.
settings.register_profile("helm", database=None, deadline=None)
settings.register_profile(
    "ci",
    parent=settings.get_profile("helm"),
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("true", "1", "yes") else "helm")

pytest_plugins = ["tests.servers.fixtures", "tests.qtloop"]

# Benchmarks run only through `make bench` (scripts/bench.sh sets HELM_BENCH=1): they are slow
# and their numbers are reported as a table, not as pass/fail.
collect_ignore = [] if os.environ.get("HELM_BENCH") == "1" else ["bench"]


# Qt-driven tests mark a qasync loop as the running loop for the rest of the process (Qt's own
# event loop is entered once per process, and the ``qloop`` fixture is session-wide);
# pytest-asyncio tests need no running loop. So every test that uses ``qloop`` runs last.


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: "qloop" in getattr(item, "fixturenames", ()))
