"""The real TDT (PyPI ``thisdamnthing[mcp]``, in its own venv: it needs mcp>=2.3) and real TDT
workspaces made with ``tdt init --agent none DIR``, seeded through TDT's own command line."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support import TEST_DEPS

TDT_BIN = TEST_DEPS / "tdt" / "bin"
TDT = TDT_BIN / "tdt"
SEED = "Seeded by Helm's tests"


def tdt(*argv: str, stdin: str = "") -> str:
    """Run the tdt command line; its stdout (a failure raises with its stderr)."""
    done = subprocess.run(
        [str(TDT), *argv], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"tdt {' '.join(argv)} failed: {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class TdtWorkspace:
    """A real TDT workspace and what was seeded in it."""

    root: Path
    reminder: str
    """The id of a pending reminder (revision 1), "Water the plants"."""
    candidate: str
    """The id of a pending candidate, "Proj1 is a demo"."""
    legacy_note: str
    """An approved note kept under its id (an old TDT's file name): brain names renames it."""


def make_workspace(root: Path) -> TdtWorkspace:
    """``tdt init --agent none root``, then a reminder, a registered project with a pending
    candidate about it, and an approved note under a legacy file name."""
    tdt("init", "--agent", "none", str(root))
    ws = ("--workspace", str(root))
    reminder = {"title": "Water the plants", "body": "The ferns by the window",
                "due_at": "2030-01-01T09:00:00+00:00", "timezone": "UTC"}  # fmt: skip
    added = json.loads(tdt(*ws, "reminder", "add", "--user-instruction", SEED, stdin=json.dumps(reminder)))
    project = root.parent / f"{root.name}-project"
    project.mkdir(exist_ok=True)
    registered = tdt(*ws, "project", "add", str(project)).split("Registered: ", 1)[1].split()[0]
    summary = {"title": "Proj1 is a demo", "kind": "fact", "body": "Proj1 holds the demo.",
               "sources": [str(project)], "links": ["index"], "project": None}  # fmt: skip
    proposed = tdt(*ws, "project", "propose", registered, stdin=json.dumps(summary))
    candidate = proposed.split("pending: ", 1)[1].split()[0]
    note = {"title": "Helm brokers calls", "kind": "fact", "body": "Helm brokers every call.",
            "sources": ["docs"], "links": ["index"]}  # fmt: skip
    saved = json.loads(tdt(*ws, "brain", "save", "--user-instruction", SEED, stdin=json.dumps(note)))
    legacy = root / "brain" / "knowledge" / f"{saved['id']}.md"
    os.replace(root / saved["path"], legacy)
    return TdtWorkspace(root, added["id"], candidate, legacy.name)
