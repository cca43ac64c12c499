"""``helm dev``, in its own process: when its window closes it lets go of what it opened."""

from __future__ import annotations

import subprocess
import sys

import pytest

# The window's session ends at once: what remains is the process's own set-up and tear-down.
CHILD = """
import sys

import app.appdev
import app.devmode


async def closed_at_once(*args: object) -> int:
    return 0


app.devmode.session = closed_at_once
app.appdev._session = closed_at_once
sys.exit({call})
"""


@pytest.mark.parametrize(
    "call",
    [
        pytest.param("app.devmode.run_dev(None, False)", id="extension"),
        pytest.param("app.appdev.run_app_dev(None, 'w')", id="app"),
    ],
)
def test_author_mode_closes_the_engines_dead_end_port_when_its_window_closes(call: str) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-c", CHILD.format(call=call)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # A socket left to the garbage collector says so on stderr (its warning is an error here).
    assert "ResourceWarning" not in done.stderr, done.stderr
