"""A saving process for the crash harness: one save of one kind, stopped at one of its I/O steps.

Usage: ``python -m tests.unit.crash_child KIND HOME ROOT STEP SEED``

The child runs Helm's real code for one save of KIND (``SAVES``) in the Helm home HOME (ROOT: the
workspace folder a files write writes into). Every ``os`` call that changes the disk is a step.
At step STEP the child stops itself (SIGSTOP) — after writing a part of the bytes, when the step
is a write — and the parent SIGKILLs it there. With STEP 0 it runs to the end and prints how many
steps the save took. SEED chooses how much of a write is written before the stop.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Each save imports what it uses, so a helper starts fast.
STEPS = ("write", "fsync", "replace", "rename", "ftruncate", "link", "unlink", "fchmod", "mkdir")
NOTE = "notes/a.md"
OLD_TEXT, NEW_TEXT = "old\n" * 2000, "new\n" * 3000


def settings(home: Path, root: Path, n: int) -> None:
    from broker.settings import Home, Workspace

    with Home(home).update() as s:
        s.workspaces[f"ws{n}"] = Workspace(f"ws{n}", root, projects={f"p{i}": root for i in range(20)})


def credentials(home: Path, root: Path, n: int) -> None:
    from broker.credentials import FileStore

    FileStore(home / "credentials.json").set(f"service/s{n}/token", f"secret-{n}-" + "x" * 2000)


def audit(home: Path, root: Path, n: int) -> None:
    from broker.audit import AuditLog, AuditRecord

    AuditLog.in_home(home).record(
        # A title over a page long: the record cannot fit in the slack of a full disk's last page.
        AuditRecord("main", "com.example.x", "gh", "http", "create", "confirmed", "ok", title=f"é {n}" * 1500,
                    request_digest="d" * 64, time="2026-12-01T10:00:00+00:00")
    )  # fmt: skip


def activity(home: Path, root: Path, n: int) -> None:
    from broker.activity import ActivityRecord, _LogFile

    log = _LogFile(home / "activity.jsonl", 1024 * 1024)
    log.pending.extend(
        ActivityRecord(1_764_000_000.0 + i, "main", "x", "x#d", "gh", "get", 1.5, "ok", n * 1000 + i)
        for i in range(40)
    )
    log.flush()


def layout(home: Path, root: Path, n: int) -> None:
    from ui.dashboard_layout import Span
    from ui.layout_store import LayoutStore, WorkspaceLayout

    widgets = tuple((f"com.example.w{i}", Span(1 + i % 3, 1 + n % 2)) for i in range(30))
    LayoutStore(home / "layout.json").set("main", WorkspaceLayout(widgets, ("tool",), "tool"))


def widget_settings(home: Path, root: Path, n: int) -> None:
    from ui.workspace_model import WidgetSettingsStore

    WidgetSettingsStore(home / "widget-settings.json").set(
        "main", "com.example.w", {"n": n, "pad": "p" * 3000}
    )


def state(home: Path, root: Path, n: int) -> None:
    from broker.context import CallContext
    from broker.widget_state import StateStore

    ctx = CallContext("main", "com.example.w", "com.example.w#d")
    asyncio.run(StateStore(home).set(ctx, {"n": n, "pad": "s" * 5000}))


def agent_sessions(home: Path, root: Path, n: int) -> None:
    from broker.agents import history

    session = history.PastSession(f"s{n}", "echo", "main", (), "2026-12-01T10:00:00+00:00", "t" * 80)
    history.remember(home, session)


def files_write(home: Path, root: Path, n: int) -> None:
    from broker.fs.guard import FileGuard, GuardRoot

    guard = FileGuard([GuardRoot(root)], home=home)
    guard.write_text(NOTE, NEW_TEXT if n else OLD_TEXT, create=True)


SAVES: dict[str, Callable[[Path, Path, int], None]] = {
    "settings": settings,
    "credentials": credentials,
    "audit": audit,
    "activity": activity,
    "layout": layout,
    "widget settings": widget_settings,
    "state": state,
    "agent sessions": agent_sessions,
    "files write": files_write,
}


def _stepping(stop_at: int, rng: random.Random) -> list[int]:
    """Count every disk-changing ``os`` call, and stop the process at call ``stop_at``."""
    count = [0]

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            count[0] += 1
            if count[0] == stop_at:
                if name == "write" and len(args[1]) > 1:
                    real(args[0], bytes(args[1][: rng.randrange(1, len(args[1]))]))
                os.kill(os.getpid(), signal.SIGSTOP)  # the parent SIGKILLs us here
            return real(*args, **kwargs)

        return step

    for name in STEPS:
        setattr(os, name, wrap(name, getattr(os, name)))
    return count


def main() -> None:
    kind, home, root, stop_at, seed = (
        sys.argv[1],
        Path(sys.argv[2]),
        Path(sys.argv[3]),
        int(sys.argv[4]),
        int(sys.argv[5]),
    )
    count = _stepping(stop_at, random.Random(seed))
    SAVES[kind](home, root, 1)
    print(count[0])


if __name__ == "__main__":
    main()
