"""``helm`` as a real subprocess whose terminal lines a test waits for (no sleeps)."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[3]


class Terminal:
    """A running ``helm`` command: its stdout lines as they come, its stderr kept."""

    def __init__(self, *argv: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", *argv],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._ended = False
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            threading.Thread(target=self._read_out, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._read_err, args=(self.proc.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    # Each reader closes its pipe at the end: only the thread that reads it may close it.
    def _read_out(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self._queue.put(line.rstrip("\n"))
        self._queue.put(None)  # the end: nothing more will come

    def _read_err(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self.errors.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, *, since: int = 0, timeout: float = 60.0) -> re.Match[str]:
        """The first line from index ``since`` on that matches ``pattern`` (waits for it)."""
        wanted = re.compile(pattern)
        seen = since
        while True:
            for line in self.lines[seen:]:
                if found := wanted.search(line):
                    return found
            seen = len(self.lines)
            if self._ended:
                raise AssertionError(
                    f"helm ended before {pattern!r}:\n" + "\n".join(self.lines + self.errors)
                )
            try:
                self._take(self._queue.get(timeout=timeout))
            except queue.Empty:
                raise AssertionError(f"no line matched {pattern!r}:\n" + "\n".join(self.lines)) from None

    def _take(self, line: str | None) -> None:
        if line is None:
            self._ended = True
        else:
            self.lines.append(line)

    def mark(self) -> int:
        """Where the lines after now begin (what already arrived is read first)."""
        while not self._queue.empty():
            self._take(self._queue.get_nowait())
        return len(self.lines)

    def interrupt(self, timeout: float = 60.0) -> int:
        """Ctrl+C, then the exit code once the process and its readers are done."""
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout)
        self.mark()
        return code

    def kill(self) -> None:
        """Stop the process; its pipes are closed when this returns."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        for reader in self._readers:
            reader.join(30)
