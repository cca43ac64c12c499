"""Another Helm process for the kill switch tests: one stop, paused while it holds the lock.

Usage: ``python -m tests.unit.killswitch_child HOME EXTENSION``

The child stops EXTENSION in workspace ``ws`` of the Helm home HOME with Helm's real
``KillSwitch.set``. When it has read the file and is about to write it (holding the lock), it
says ``holding`` and waits for a line on stdin; then it writes, releases the lock and says
``done``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import broker.killswitch
from broker.killswitch import KillSwitch


def main(home: str, extension: str) -> None:
    real = broker.killswitch.write_atomic

    def paused(path: Path, data: bytes, *, mode: int = 0o600) -> None:
        print("holding", flush=True)
        sys.stdin.readline()
        real(path, data, mode=mode)

    broker.killswitch.write_atomic = paused
    KillSwitch(Path(home)).set("ws", extension, None, True)
    print("done", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
