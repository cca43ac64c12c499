"""``helm --self-test`` in its own process, as a packager runs it on a built bundle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_the_self_test_reads_through_the_bridge_refuses_unconfirmed_writes_and_exits_0(
    tmp_path: Path,
) -> None:
    users_home = tmp_path / "home"
    env = {**os.environ, "HELM_HOME": str(users_home)}
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "--self-test"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("helm ")
    assert "ok    start-up check: a test page's preconnect reached nothing" in lines
    assert any(line.startswith("ok    read notes/welcome.md through the bridge") for line in lines)
    assert any("write through the bridge: declined (Cancel), file unchanged" in line for line in lines)
    assert any("write without a token: confirmation_required, file unchanged" in line for line in lines)
    for read in ("demo.current_time", "tdt.tdt_workspace_status", "tasks.counts"):
        assert any(line.startswith("ok") and line.endswith(read) for line in lines), read
    assert lines[-1].startswith("self-test passed in ")
    assert not users_home.exists()  # the user's Helm home is never touched
