"""The processes the benchmarks start and measure: their output, and their memory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import process_children

ROOT = Path(__file__).resolve().parents[2]


def run_child(
    args: list[str], *, env: dict[str, str] | None = None, unset: tuple[str, ...] = (), timeout: float = 300
) -> str:
    """The standard output of ``python ARGS`` run headless from the repository root, with
    ``env`` added to this process's environment and the ``unset`` variables taken out."""
    environment = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env or {})}
    for name in unset:
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
        check=True,
        cwd=ROOT,
    ).stdout


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _is_engine(pid: int) -> bool:
    try:
        return b"QtWebEngineProcess" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False


def tree_pss_mib(root: int | None = None, *, engine_only: bool = False) -> float:
    """Proportional memory of ``root`` (this process) and its descendants, MiB; with
    ``engine_only``, of the web engine's processes alone below it (not, say, MCP servers)."""
    children = process_children()
    top = os.getpid() if root is None else root
    total_kib, todo = _pss_kib(top), list(children.get(top, []))
    while todo:
        pid = todo.pop()
        if engine_only and not _is_engine(pid):
            continue
        todo.extend(children.get(pid, []))
        total_kib += _pss_kib(pid)
    return total_kib / 1024
