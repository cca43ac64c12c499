"""No debugging port ever listens in Helm's process, whatever the environment asks for."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_debugging_port_asked_for_by_the_environment_or_the_flags_never_listens() -> None:
    by_variable, by_flag = free_port(), free_port()
    env = {
        **os.environ,
        "QTWEBENGINE_REMOTE_DEBUGGING": f"127.0.0.1:{by_variable}",
        "QTWEBENGINE_CHROMIUM_FLAGS": f"--no-sandbox --remote-debugging-port={by_flag}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.host.debugport", str(by_variable), str(by_flag)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == [f"{by_variable} closed", f"{by_flag} closed"], done.stderr[-2000:]
    assert "QTWEBENGINE_REMOTE_DEBUGGING" in done.stderr
    assert f"--remote-debugging-port={by_flag}" in done.stderr
