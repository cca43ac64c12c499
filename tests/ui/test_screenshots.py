"""The screenshot script keeps working: every screen and dialog renders to a PNG."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import REPO

EXPECTED = {
    "main-window", "main-window-widget-settings", "main-window-tool-page", "confirm-db", "confirm-http",
    "confirm-mcp", "confirm-files", "confirm-hostile", "confirm-expired", "review-install", "review-changed",
    "db-write-toggle", "settings-services", "settings-mcp", "settings-databases", "db-explorer", "audit-log",
    "workspace-settings", "main-window-narrow", "dashboard-moved-and-resized", "dashboard-layout-menu",
    "dashboard-stopped-and-error-strip", "activity", "activity-failed-only", "audit-log-detail",
    "dashboard-live", "dashboard-live-stopped", "activity-live", "agents-page", "agents-permission",
    "agents-write", "agents-permission-hostile", "settings-agents", "settings-agents-adapter",
    "settings-agents-invalid", "command-palette", "command-palette-no-match", "main-window-empty",
    "updates", "review-update", "start-build", "start-build-move", "start-frame",
}  # fmt: skip


def test_the_screenshot_script_renders_every_screen_to_a_png(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "screenshots.py"), str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    written = {p.stem for p in tmp_path.glob("*.png")}
    assert written >= EXPECTED
    assert all(p.stat().st_size > 2000 for p in tmp_path.glob("*.png"))
