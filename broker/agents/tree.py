"""Everything an agent started, found wherever it went: its process tree and its mark.

A process group is not enough to end what an agent started: a grandchild that calls
``setsid`` (a daemon, ``nohup``, a double fork) leaves the group, and once its parent exits it
leaves the agent's tree too. So each agent gets a mark, a variable in its environment that
every process it starts inherits (``MARK_VARIABLE``, a random value per agent, no secret), and
``descendants`` finds, on Linux from ``/proc``:

* every process below the agent in the process tree, and
* every process that carries the agent's mark, wherever it was reparented, and those below it.

Elsewhere (no ``/proc``) it finds nothing, and the process group is all Helm ends. A process
that clears its environment after leaving the agent's tree is not found; the agent process
itself runs as the user, which Helm does not sandbox.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

MARK_VARIABLE = "HELM_AGENT_RUN"
_PROC = Path("/proc")


def new_mark() -> str:
    return secrets.token_hex(16)


def _stat(pid: str) -> tuple[int, str] | None:
    """The parent pid and the state of ``pid``, or None when it is gone."""
    try:
        text = (_PROC / pid / "stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return int(fields[1]), fields[0]


def _marked(pid: str, mark: bytes) -> bool:
    try:
        return mark in b"\0" + (_PROC / pid / "environ").read_bytes()
    except OSError:  # gone, or not the user's
        return False


def descendants(root: int, mark: str) -> set[int]:
    """The live processes ``root`` started (not ``root`` itself, never Helm), as pids."""
    try:
        names = [n for n in os.listdir(_PROC) if n.isdigit()]
    except OSError:
        return set()
    needle = f"\0{MARK_VARIABLE}={mark}\0".encode()
    children: dict[int, list[int]] = {}
    start = {root}
    for name in names:
        stat = _stat(name)
        if stat is None or stat[1] in ("Z", "X"):  # a zombie is already dead: its parent reaps it
            continue
        children.setdefault(stat[0], []).append(int(name))
        if _marked(name, needle):
            start.add(int(name))
    found: set[int] = set()
    todo = list(start)
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            if child not in found:
                found.add(child)
                todo.append(child)
    found |= start
    found -= {root, os.getpid()}
    return found
