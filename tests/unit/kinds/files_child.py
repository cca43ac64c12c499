"""A writer process for the files kind tests: it runs Helm's real write code in a child.

Usage: ``python -m tests.unit.kinds.files_child MODE ROOT HOME PATH`` (HOME: Helm's home)

* ``hang``: replace PATH once; when the temp file is fsynced, say ``in-write`` and wait to be
  killed (the parent sends SIGKILL mid-write).
* ``loop``: replace PATH with alternating texts A and B forever, saying ``wrote`` after each.
* ``race``: say ``ready``, wait for the expected hash on stdin, replace PATH once, and say
  ``ok`` or the error code.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from broker.errors import CallError
from broker.fs.guard import FileGuard, GuardRoot

TEXT_A = "A" * 200_000 + "\n"
TEXT_B = "B" * 200_000 + "\n"


def _sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _hang_in_fsync() -> None:
    real = os.fsync

    def fsync(fd: int) -> None:
        real(fd)
        if ".helm-write-" in os.readlink(f"/proc/self/fd/{fd}"):
            print("in-write", flush=True)
            sys.stdin.read()  # block until killed

    os.fsync = fsync


def main(mode: str, root: str, home: str, path: str) -> None:
    guard = FileGuard([GuardRoot(Path(root))], Path(home))
    if mode == "hang":
        _hang_in_fsync()
        current = (Path(root) / path).read_bytes()
        guard.write_text(path, TEXT_A, _sha(current))
    elif mode == "loop":
        current = (Path(root) / path).read_text()
        texts = [TEXT_A, TEXT_B]
        i = 0
        while True:
            new = texts[i % 2]
            guard.write_text(path, new, _sha(current))
            current = new
            i += 1
            print("wrote", flush=True)
    elif mode == "race":
        print("ready", flush=True)
        expected = sys.stdin.readline().strip()
        text = f"written by {os.getpid()}\n"
        try:
            guard.write_text(path, text, expected)
        except CallError as err:
            print(err.code.value, flush=True)
        else:
            print("ok", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
