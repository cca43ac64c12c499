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
    assert done.stderr == "", "the engine's and Qt's own remarks show only with --verbose"


def test_verbose_leaves_the_engines_logging_as_the_user_set_it() -> None:
    probe = (
        "import logging, os; from app.enginelog import quiet_engine, FLAGS_VARIABLE;"
        "quiet_engine({verbose}, logging.NullHandler()); print(os.environ.get(FLAGS_VARIABLE, ''))"
    )

    def flags(verbose: bool, given: str) -> str:
        env = {**os.environ, "QTWEBENGINE_CHROMIUM_FLAGS": given}
        code = probe.format(verbose=verbose)
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert flags(False, "--no-sandbox") == "--no-sandbox --log-level=3"
    assert flags(True, "--no-sandbox") == "--no-sandbox"
    assert flags(False, "--no-sandbox --log-level=0") == "--no-sandbox --log-level=0"
