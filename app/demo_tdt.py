"""The demo's TDT: a real TDT workspace when ``tdt`` is installed, else Helm's stand-in.

With ``tdt`` on the PATH Helm gives its children, the demo workspace is made a TDT workspace
(``tdt init --agent none``, which keeps the demo's own files) and seeded once, through TDT's own
command line, with two reminders, two approved notes to search, and an internal project with one
candidate to review. Its everyday profile is on, so the demo's reminder and review widgets can
write — each write still waits for the user's Confirm. Without ``tdt``, the workspace uses the
stand-in (``resources/demo/servers/demo_tdt.py``), whose every answer says that it is one.
"""

from __future__ import annotations

import datetime
import json
import logging
import shutil
import subprocess
from pathlib import Path

from broker.childenv import safe_environment

log = logging.getLogger("helm.demo")

INSTRUCTION = "Set up by Helm's demo"
TIMEOUT = 120.0


def find_tdt() -> str | None:
    """The ``tdt`` a workspace without a tdt-command runs, or None."""
    return shutil.which("tdt", path=safe_environment().get("PATH", ""))


def _tdt(program: str, *argv: str, stdin: str = "") -> str:
    done = subprocess.run(
        [program, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=safe_environment(),
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"tdt {argv[2] if len(argv) > 2 else argv[0]} failed: {done.stderr.strip()[-300:]}"
        )
    return done.stdout


def make_tdt_workspace(program: str, root: Path) -> bool:
    """Make ``root`` a seeded TDT workspace once; False (logged) when TDT refused."""
    if (root / ".tdt").exists():
        return True
    try:
        _tdt(program, "init", "--agent", "none", str(root))
        ws = ("--workspace", str(root))
        soon = datetime.datetime.now(datetime.UTC).replace(minute=0, second=0, microsecond=0)
        for days, title in ((0, "Look at every widget"), (1, "Review the demo's candidate")):
            due = (soon + datetime.timedelta(days=days, hours=2)).isoformat()
            reminder = {"title": title, "body": title, "due_at": due, "timezone": "UTC"}
            _tdt(
                program, *ws, "reminder", "add", "--user-instruction", INSTRUCTION, stdin=json.dumps(reminder)
            )
        for title, body in (
            ("Helm brokers every call", "Extensions never fetch data: Helm checks and sends each call."),
            (
                "Every write is confirmed",
                "Helm's broker asks in its own dialog before any write; Cancel has the focus.",
            ),
        ):
            note = {
                "title": title,
                "kind": "fact",
                "body": body,
                "sources": ["Helm's demo"],
                "links": ["index"],
            }
            _tdt(program, *ws, "brain", "save", "--user-instruction", INSTRUCTION, stdin=json.dumps(note))
        made = _tdt(program, *ws, "project", "create", "demo-site")
        project = made.split("Registered: ", 1)[1].split()[0]
        summary = {"title": "The demo site is a sample project", "kind": "fact",
                   "body": "The demo-site project exists to show candidate review in Helm.",
                   "sources": ["work/demo-site"], "links": ["index"], "project": None}  # fmt: skip
        _tdt(program, *ws, "project", "propose", project, stdin=json.dumps(summary))
    except (OSError, RuntimeError, IndexError, ValueError, subprocess.TimeoutExpired) as exc:
        log.warning("the demo uses Helm's TDT stand-in: %s", exc)
        return False
    return True
