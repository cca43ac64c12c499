"""A real X display for tests that need real windows: Xvfb, with openbox managing its windows.

``x_display()`` starts both on a free display number and yields the environment a child process
needs to use them (``DISPLAY``, ``QT_QPA_PLATFORM=xcb``); both are stopped afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

START_SECONDS = 20.0


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.fail(f"{program} is not installed: run make test-deps")
    return path


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def _wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not start within {START_SECONDS:.0f} s")
        time.sleep(0.05)


@contextlib.contextmanager
def x_display(tmp: Path) -> Iterator[dict[str, str]]:
    xvfb, openbox, xprop = _require("Xvfb"), _require("openbox"), _require("xprop")
    _require("xdotool")
    read, write = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    try:
        with os.fdopen(read) as number:
            display = f":{number.readline().strip()}"
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "HOME": str(tmp)}
        manager = subprocess.Popen(
            [openbox, "--sm-disable"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:

            def managed() -> bool:
                root = subprocess.run(
                    [xprop, "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True, text=True
                )
                return "window id" in root.stdout

            _wait_for(managed, "openbox")
            yield env
        finally:
            _stop(manager)
    finally:
        _stop(server)
