"""On a real X display with a window manager: a confirmation is above every Helm window, a
full-screen app goes back inline when one opens, and the keys typed reach the dialog only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.apps.xserver import x_display

pytestmark = pytest.mark.usefixtures("mcp_app_server")

ROOT = Path(__file__).resolve().parents[3]


def probe(tmp: Path, order: str) -> dict[str, object]:
    shots = tmp / "shots"
    shots.mkdir()
    with x_display(tmp) as env:
        done = subprocess.run(
            [sys.executable, "-m", "tests.e2e.apps.stacking_probe", str(tmp / "probe"), order],
            cwd=ROOT, env={**env, "PROBE_SHOTS": str(shots)}, capture_output=True, text=True,
            timeout=240, check=False,
        )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result: dict[str, object] = json.loads(lines[-1][len("RESULT ") :])
    return result


@pytest.mark.parametrize("order", ["write-then-full", "full-then-write"])
def test_a_write_dialog_stays_above_every_window_and_takes_the_keys_typed_whatever_the_app_does(
    tmp_path: Path, order: str
) -> None:
    result = probe(tmp_path, order)
    assert "error" not in result, result
    assert result["full_screen_after"] is False, "the app went back inline before the dialog appeared"
    assert result["stacking"][-1] == "dialog", result["stacking"]  # type: ignore[index]
    assert result["on_screen"] == 1.0, "nothing covers any part of the dialog"
    assert result["keys_in_app"] == [], "keys typed while the dialog is open never reach the app"
    assert result["toggles"] == ["inline"], "full screen is refused while the dialog is open"
    assert result["rearmed_on_focus"] is True
    assert result["rearmed_on_uncover"] is True
    assert result["decision"] is None, "the keys typed answered nothing"
    if order == "write-then-full":
        assert result["asked_for_full_screen"] == {"mode": "inline"}
