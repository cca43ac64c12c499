"""An agent ends when Helm is killed outright (SIGKILL: no chance to stop it), on Linux.

A real Helm-side process starts a real agent process through ``AgentProcess.start``; the agent
ignores SIGTERM and the end of its input, so only the kernel's parent-death signal can end it.
The control starts the same agent without ``broker.parentdeath`` and sees it outlive its
parent, so the test can tell the difference.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

STUBBORN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
    "time.sleep(600)\n"
)
HELM = """
import asyncio, sys
from pathlib import Path
from broker.agents.process import AgentProcess

async def main() -> None:
    agent = await AgentProcess.start([sys.executable, "-c", {stubborn!r}], {{"PATH": "/usr/bin:/bin"}},
                                     Path.cwd(), None)
    print(agent.pid, flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""
CONTROL = """
import subprocess, sys
agent = subprocess.Popen([sys.executable, "-c", {stubborn!r}], stdin=subprocess.PIPE, start_new_session=True)
print(agent.pid, flush=True)
import time; time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _agent_after_parent_killed(script: str, tmp_path: Path) -> tuple[int, bool]:
    """Start ``script`` (which prints its agent's pid), SIGKILL it; the agent's pid and whether
    it was still alive 5 s later (or ended sooner)."""
    helm = subprocess.Popen(
        [sys.executable, "-c", script.format(stubborn=STUBBORN)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[3],
    )  # fmt: skip
    try:
        assert helm.stdout is not None
        pid = int(helm.stdout.readline())
        assert _alive(pid)
        helm.kill()
        helm.wait()
        deadline = time.monotonic() + 5.0
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        survived = _alive(pid)
        if survived:
            os.kill(pid, signal.SIGKILL)
        return pid, survived
    finally:
        helm.kill()
        helm.wait()
        if helm.stdout is not None:
            helm.stdout.close()


def test_an_agent_ends_when_helm_is_killed_outright(tmp_path: Path) -> None:
    _pid, survived = _agent_after_parent_killed(HELM, tmp_path)
    assert not survived


def test_control_the_same_agent_started_without_the_tie_outlives_its_parent(tmp_path: Path) -> None:
    _pid, survived = _agent_after_parent_killed(CONTROL, tmp_path)
    assert survived
