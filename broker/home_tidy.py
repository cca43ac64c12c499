"""What a start of Helm puts right in its home after a crash: temp files and torn log tails.

* The temp files of atomic saves that a killed process left (``broker.atomic``) in the home, its
  ``state/``, ``agents/``, ``tdt-previews/`` and ``cache/`` folders and the folders of MCP Apps —
  credentials copies included.
* The temp files of ``files`` writes that a killed process left in a user's folder, found from
  the temp ledger (``broker.fs.ledger``).
* A torn last line of the audit and activity logs, moved to their side files (``broker.jsonl``).
* The staging folders of extension archives that a killed install was unpacking
  (``broker.catalogue.archive``).

Each step removes only what it can prove a dead Helm made, so a Helm process that is running at
the same time (the app and a ``helm`` command) is never disturbed. Nothing here stops a start: a
step that fails is logged and the others still run.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from broker import jsonl
from broker.atomic import remove_stale_temps
from broker.catalogue import archive
from broker.fs.ledger import TempLedger

log = logging.getLogger("helm.home")

LOGS = ("audit.jsonl", "activity.jsonl")


@dataclass(frozen=True)
class Tidied:
    """What a start removed or set aside."""

    temps: tuple[str, ...] = ()
    write_temps: tuple[str, ...] = ()
    torn_logs: tuple[str, ...] = ()
    staging: tuple[str, ...] = ()


def save_folders(home: Path) -> list[Path]:
    """The folders of the home where Helm saves files atomically."""
    fixed = [home, home / "state", home / "agents", home / "tdt-previews", home / "cache"]
    return [*fixed, *_subfolders(home / "apps", 2)]


def _subfolders(folder: Path, depth: int) -> list[Path]:
    """The folders ``depth`` levels below ``folder`` (links not followed)."""
    try:
        with os.scandir(folder) as it:
            found = [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return found if depth == 1 else [f for child in found for f in _subfolders(child, depth - 1)]


def tidy(home: Path) -> Tidied:
    """Put the home right after a crash (see the module docstring); never raises an OSError."""
    if not home.is_dir():
        return Tidied()
    temps = [str(folder / name) for folder in save_folders(home) for name in remove_stale_temps(folder)]
    try:
        written = TempLedger(home).clean_all()
    except OSError as exc:
        log.warning("could not clean the temp files of files writes: %s", exc.strerror)
        written = []
    torn = [name for name in LOGS if _repair(home / name)]
    staging = archive.sweep_staging(home)
    if temps or written or torn or staging:
        log.info("after a crash: removed %d temp file(s) and %d unpacking folder(s), "
                 "set aside %d torn log tail(s)",
                 len(temps) + len(written), len(staging), len(torn))  # fmt: skip
    return Tidied(tuple(temps), tuple(written), tuple(torn), tuple(staging))


def _repair(path: Path) -> bool:
    if not path.exists():
        return False
    try:
        fd = jsonl.open_locked(path)
    except OSError:
        return False
    try:
        before = os.fstat(fd).st_size
        return jsonl.repair_tail(fd, jsonl.torn_path(path)) != before
    except OSError as exc:
        log.warning("could not repair the torn end of %s: %s", path.name, exc.strerror)
        return False
    finally:
        os.close(fd)
