"""Render every screen and dialog of the desktop app to PNG files, for a person to look at.

    xvfb-run -a .venv/bin/python scripts/screenshots.py OUT_DIR
    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshots.py OUT_DIR

Everything runs on a throw-away Helm home with sample workspaces, extensions, profiles, a
SQLite database and audit records. Most extension frames are placeholders; the ``*-live``
screens are Helm's window on its demo workspace with real extension frames in the web engine
(``screenshots_live.py``), skipped with a warning where the engine cannot run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if os.geteuid() == 0 and "--no-sandbox" not in os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", ""):
    # Chromium's own sandbox cannot run as root (CI); the frames keep Helm's sandbox.
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = (
        os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "") + " --no-sandbox"
    ).strip()

import qasync  # noqa: E402
from screenshots_agents import agent_screens  # noqa: E402
from screenshots_live import shoot_live  # noqa: E402
from screenshots_look import look_screens  # noqa: E402
from screenshots_pages import activity_screens, dashboard_screens  # noqa: E402
from screenshots_updates import updates_screens  # noqa: E402

from broker.audit import AuditRecord  # noqa: E402
from broker.broker import Broker  # noqa: E402
from broker.context import ExtensionFrame  # noqa: E402
from broker.credentials import FileStore  # noqa: E402
from broker.extensions import install, review_and_approve  # noqa: E402
from broker.kinds.db import profiles as db_profiles  # noqa: E402
from broker.kinds.db.explorer import DbExplorer as ExplorerLogic  # noqa: E402
from broker.kinds.http import profiles as http_profiles  # noqa: E402
from broker.mcp import profiles as mcp_profiles  # noqa: E402
from broker.orchestrate.builds import BuildPlan, BuildQuestion  # noqa: E402
from broker.summary import Decision, WriteSummary  # noqa: E402
from broker.workspaces import add_project, add_workspace  # noqa: E402
from ui.audit_view import AuditView  # noqa: E402
from ui.dashboard import FrameSpec, placeholder_view  # noqa: E402
from ui.db_explorer import DbExplorerWindow  # noqa: E402
from ui.dialogs.build import BuildDialog  # noqa: E402
from ui.dialogs.confirm import ConfirmDialog  # noqa: E402
from ui.dialogs.review import ReviewDialog, ReviewReason  # noqa: E402
from ui.host import prepare_engine  # noqa: E402
from ui.main_window import MainWindow  # noqa: E402
from ui.qt import QApplication, QWidget  # noqa: E402
from ui.settings.backend import BrokerConnections  # noqa: E402
from ui.settings.connections import ConnectionsPage  # noqa: E402
from ui.shell import WindowShell  # noqa: E402
from ui.workspace_model import WorkspaceModel  # noqa: E402
from ui.workspace_settings import WorkspaceSettings  # noqa: E402

NOTES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["notes/*.md"],
    "operations": ["list", "read", "write"],
}
BOARD = {
    "id": "com.example.board",
    "name": "Issue board",
    "version": "1.2.0",
    "kind": "widget",
    "entry": "index.html",
    "permissions": {"write": True},
    "settings": {
        "repo": {"type": "string", "label": "Repository", "required": True, "default": "me/app"},
        "limit": {"type": "integer", "label": "Items", "default": 20, "minimum": 1, "maximum": 100},
        "state": {"type": "choice", "label": "State", "choices": ["open", "closed"], "default": "open"},
    },
    "connections": [
        {
            "id": "gh",
            "kind": "http",
            "service": "github",
            "calls": {
                "issues": {
                    "method": "GET",
                    "path": "/repos/{owner}/{repo}/issues",
                    "query": {"per_page": "{limit}"},
                },
                "close": {
                    "method": "PATCH",
                    "path": "/repos/{owner}/{repo}/issues/{number}",
                    "body": {"state": "closed"},
                    "write": True,
                },
            },
        },
        {
            "id": "tools",
            "kind": "mcp",
            "server": "github",
            "operations": ["list_issues"],
            "writes": ["create_issue"],
        },
        {
            "id": "app",
            "kind": "db",
            "service": "local-app",
            "engine": "sqlite",
            "queries": {
                "recent": {
                    "sql": "SELECT id, title FROM tickets ORDER BY id DESC LIMIT ?",
                    "params": ["limit"],
                },
                "close": {
                    "sql": "UPDATE tickets SET status = 'closed' WHERE id = ?",
                    "params": ["id"],
                    "write": True,
                },
            },
        },
        NOTES,
    ],
}


def summary(
    kind: str,
    title: str,
    fields: tuple[tuple[str, str], ...],
    request: str,
    diff: str | None = None,
    name: str = "Issue board",
) -> WriteSummary:
    who = ExtensionFrame("main", "com.example.board", "com.example.board#dashboard", name)
    return WriteSummary("t", 300.0, kind, title, who, "c", "op", fields, request, "0" * 64, diff)


FILES_DIFF = (
    "--- a/notes/today.md\n+++ b/notes/today.md\n@@ -1,3 +1,3 @@\n"
    " # Today\n-- buy milk\n+- buy oat milk\n - call Sam\n"
)
SUMMARIES = {
    "confirm-db": summary(
        "db",
        "Confirm database write",
        (
            ("Query", "close"),
            ("Connection", "local-app (sqlite)"),
            ("SQL", "UPDATE tickets SET status = 'closed' WHERE id = ?"),
            ("Args", "[42]"),
        ),  # as the db kind describes it: the SQL and args are shown once, in the request
        "UPDATE tickets SET status = 'closed' WHERE id = ?\nargs: [42]",
    ),
    "confirm-http": summary(
        "http",
        "Confirm request",
        (("Service", "github"), ("Method", "PATCH"), ("URL", "https://api.github.com/repos/me/app/issues/7")),
        'PATCH https://api.github.com/repos/me/app/issues/7\n\n{"state": "closed"}',
    ),
    "confirm-mcp": summary(
        "mcp",
        "Confirm tool call",
        (
            ("MCP server", "github"),
            ("Tool", "create_issue"),
            ("Arguments", '{"owner":"me","repo":"app","title":"Crash on start"}'),
        ),
        'create_issue {"owner":"me","repo":"app","title":"Crash on start"}',
    ),
    "confirm-files": summary(
        "files", "Confirm file change", (("Workspace", "main"), ("Path", "notes/today.md")), "", FILES_DIFF
    ),
    "confirm-hostile": summary(
        "http",
        "Confirm request",
        (
            ("Service", "<b>x</b><img src=x>"),
            ("Method", "POST"),
            ("URL", "https://evil.example/\u202egpj.exe/" + "a" * 400),
        ),
        "POST https://evil.example/\n\n" + "<script>alert(1)</script>\n" * 2000,
        name="<b>Bold</b> \u202eevil",
    ),
}


def sample_database(db: Path) -> Path:
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY, title TEXT, status TEXT)")
        conn.executemany(
            "INSERT INTO tickets (title, status) VALUES (?, ?)",
            [("Crash on start", "open"), ("Typo in menu", "closed"), ("<b>not bold</b>", "open")],
        )
    return db


def add_profiles(broker: Broker, db: Path) -> None:
    """One sample profile per kind with profiles (the secrets are sample data)."""
    db_profiles.DATABASES.store(broker.home, broker.credentials).save(
        db_profiles.DbProfile("local-app", "sqlite", path=str(db))
    )
    http_profiles.SERVICES.store(broker.home, broker.credentials).save(
        http_profiles.ServiceProfile("github", "https://api.github.com"),
        {"token": "sample"},  # sample data
    )
    mcp_profiles.MCP_SERVERS.store(broker.home, broker.credentials).save(
        mcp_profiles.StdioProfile("github", ("github-mcp", "--stdio"), "GITHUB_TOKEN"), {"token": "x"}
    )


def build_home(root: Path, loop: asyncio.AbstractEventLoop) -> Broker:
    home = root / "home"
    broker = Broker(home, credentials=FileStore(home / "credentials.json"))
    broker.home.ensure()
    ws_root = root / "workspace"
    (ws_root / "notes").mkdir(parents=True)
    (ws_root / "notes" / "today.md").write_text("# Today\n- buy milk\n", encoding="utf-8")
    (ws_root / "app").mkdir()
    add_workspace(broker.home, "main", ws_root)
    add_project(broker.home, "main", "app", ws_root / "app")
    (root / "side").mkdir()
    add_workspace(broker.home, "side-project", root / "side")  # the empty states
    add_profiles(broker, sample_database(root / "app.db"))
    _samples(broker, root, loop)
    return broker


def _samples(broker: Broker, root: Path, loop: asyncio.AbstractEventLoop) -> None:
    """The sample extensions (approved, but for one) and audit records."""
    for ext_id, name, kind, connections in (
        ("com.example.clock", "World clock", "widget", [NOTES]),
        ("com.example.notes", "Notes", "widget", [NOTES]),
        ("com.example.editor", "Note editor", "tool", [NOTES]),
    ):
        raw = {
            "id": ext_id,
            "name": name,
            "version": "1.0.0",
            "kind": kind,
            "entry": "index.html",
            "permissions": {"write": True},
            "connections": connections,
        }
        folder = _extension(root / "ext" / ext_id, raw)
        install(broker.home, "main", folder)
        loop.run_until_complete(review_and_approve(broker, "main", ext_id))
    install(broker.home, "main", _extension(root / "ext" / "board", BOARD))
    # No github server here: its tools are left to be pinned at the first call.
    loop.run_until_complete(review_and_approve(broker, "main", "com.example.board"))
    weather = {**BOARD, "id": "com.example.weather", "name": "Weather", "settings": {}}
    install(broker.home, "main", _extension(root / "ext" / "weather", weather))  # not approved
    for i, (decision, outcome) in enumerate(
        (("confirmed", "ok"), ("declined", "nothing sent"), ("expired", "nothing sent"))
    ):
        broker.audit.record(
            AuditRecord(
                "main",
                "com.example.board",
                "gh",
                "http",
                "close",
                decision,
                outcome,
                "Confirm request",
                "0" * 64,
                f"2026-01-0{i + 1}T10:00:00+00:00",
            )
        )


class Answer:
    """A confirmer that answers at once and remembers what it was asked."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        self.asked: list[WriteSummary] = []

    async def __call__(self, summary: WriteSummary) -> Decision:
        self.asked.append(summary)
        return self.decision


async def toggle_summary(broker: Broker) -> WriteSummary:
    """What Helm asks when the user turns DB explorer writes on."""
    answer = Answer(Decision.DECLINED)
    await ExplorerLogic(broker).enable_writes("local-app", answer)
    return answer.asked[0]


def _extension(folder: Path, raw: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")
    (folder / "index.html").write_text("<!doctype html><p>demo</p>", encoding="utf-8")
    return folder


async def save(widget: QWidget, out: Path, name: str, size: tuple[int, int] | None = None) -> Path:
    if size is not None:
        widget.resize(*size)
    widget.show()
    # Let the loop lay the window out (processEvents here would re-enter running tasks).
    await asyncio.sleep(0.05)
    path = out / f"{name}.png"
    if not widget.grab().save(str(path)):
        raise SystemExit(f"could not write {path}")
    print(path)
    return path


def shoot(out: Path) -> list[Path]:
    dead_end = prepare_engine()  # before the QApplication: the live screens run real frames
    app = QApplication.instance() or QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    executor = qasync.QThreadExecutor(2)  # the broker's file work; ended before Qt is
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory() as tmp:
        broker = build_home(Path(tmp), loop)
        try:
            written: list[Path] = loop.run_until_complete(_shoot_all(out, broker, Path(tmp)))
        finally:
            loop.run_until_complete(broker.aclose())
        written += loop.run_until_complete(shoot_live(out, Path(tmp), save))
    executor.shutdown(wait=True)
    dead_end.close()
    return written


async def _shoot_all(out: Path, broker: Broker, root: Path) -> list[Path]:
    written: list[Path] = []
    frame = WindowShell()  # what a start paints first
    written.append(await save(frame, out, "start-frame", (1280, 760)))
    frame.deleteLater()
    model = WorkspaceModel(broker)
    window = MainWindow(model, placeholder_view, BrokerConnections(broker), ExplorerLogic(broker))
    window.show_workspace("side-project", ask=False)
    written.append(await save(window, out, "main-window-empty", (1280, 760)))
    window.show_workspace("main", ask=False)
    written.append(await save(window, out, "main-window", (1280, 760)))
    board = next(c for c in window.dashboard.cards if c.frame.manifest.id == "com.example.board")
    board.settings_button.setChecked(True)
    written.append(await save(window, out, "main-window-widget-settings", (1280, 760)))
    board.settings_button.setChecked(False)
    written.append(await save(window, out, "main-window-narrow", (820, 760)))
    written += await dashboard_screens(out, window, save)
    row = model.row("main", "com.example.editor")
    assert row is not None
    assert row.manifest is not None
    window.open_tool(FrameSpec("main", row.manifest, "editor#tool"))
    written.append(await save(window, out, "main-window-tool-page", (1280, 760)))
    written += await activity_screens(out, window, broker, save)
    written += await look_screens(out, window, broker, save, again_in_dark(broker))
    written += await agent_screens(out, window, broker, root, save)
    written += await _dialogs(out, broker)
    written += await _windows(out, broker)
    written += await updates_screens(out, broker, root, save)
    window.close()
    await window.aclose()
    return written


def again_in_dark(broker: Broker) -> dict[str, tuple[Callable[[], QWidget], tuple[int, int]]]:
    """The dialogs and windows ``look_screens`` renders in dark too."""
    review = broker.manifest("main", "com.example.board").review()

    def audit_detail() -> QWidget:
        audit = AuditView(broker.audit)
        audit.table.setCurrentCell(0, 0)
        return audit

    return {
        "audit-log-detail": (audit_detail, (1100, 620)),
        "start-frame": (WindowShell, (1280, 760)),
        "confirm-files": (lambda: ConfirmDialog(SUMMARIES["confirm-files"], guard_ms=0), (640, 560)),
        "review-install": (lambda: ReviewDialog(review, ReviewReason.INSTALL, guard_ms=0), (720, 760)),
    }


async def _dialogs(out: Path, broker: Broker) -> list[Path]:
    written = []
    for name, s in SUMMARIES.items():
        # At the size the dialog asks for (a diff takes the room it is given).
        size = (640, 560) if s.diff else None
        written.append(await save(ConfirmDialog(s, guard_ms=0), out, name, size))
    expired = ConfirmDialog(SUMMARIES["confirm-http"], guard_ms=0)
    expired.expire()
    written.append(await save(expired, out, "confirm-expired", None))
    review = broker.manifest("main", "com.example.board").review()
    written.append(
        await save(ReviewDialog(review, ReviewReason.INSTALL, guard_ms=0), out, "review-install", (720, 760))
    )
    written.append(
        await save(ReviewDialog(review, ReviewReason.CHANGED, guard_ms=0), out, "review-changed", (720, 760))
    )
    written.append(
        await save(ConfirmDialog(await toggle_summary(broker), guard_ms=0), out, "db-write-toggle")
    )
    plan = BuildPlan(
        ExtensionFrame("main", "com.example.board", "page", "Task board"), "claude", "web",
        Path("/home/ada/work/web"), 'Implement task T-1 ("Add a contact page") of project web.', True,
    )  # fmt: skip
    written.append(await save(BuildDialog(BuildQuestion(plan), guard_ms=0), out, "start-build", None))
    move = BuildQuestion(plan, SUMMARIES["confirm-files"], "Move")
    written.append(await save(BuildDialog(move, guard_ms=0), out, "start-build-move", (1000, 600)))
    return written


async def _windows(out: Path, broker: Broker) -> list[Path]:
    written = []
    page = ConnectionsPage(BrokerConnections(broker))
    page.pages["http"].list.setCurrentRow(0)
    written.append(await save(page, out, "settings-services", (920, 620)))
    page.pages["http"].new()
    page.pages["http"].fields["name"].set("calendar")
    page.pages["http"].fields["base_url"].set("http://calendar.example.com")
    page.pages["http"].fields["auth"].set("oauth2")
    written.append(await save(page, out, "settings-services-oauth2-invalid", (920, 620)))
    page.tabs.setCurrentWidget(page.pages["mcp"])
    page.pages["mcp"].list.setCurrentRow(0)
    page.pages["mcp"].fields["token_env"].set("LD_PRELOAD")
    written.append(await save(page, out, "settings-mcp", (920, 620)))
    page.tabs.setCurrentWidget(page.pages["db"])
    page.pages["db"].list.setCurrentRow(0)
    test = page.pages["db"].start_test()
    if test is not None:
        await test
    written.append(await save(page, out, "settings-databases", (920, 620)))
    page.pages["db"].new()
    page.pages["db"].fields["engine"].set("postgres")
    page.pages["db"].fields["host"].set("postgres://db")
    page.pages["db"].fields["port"].set("99999")
    written.append(await save(page, out, "settings-databases-server-invalid", (920, 620)))
    logic = ExplorerLogic(broker)
    explorer = DbExplorerWindow(logic)
    explorer.sql.setPlainText("SELECT id, title, status FROM tickets ORDER BY id")
    task = explorer.start_run()
    if task is not None:
        await task
    written.append(await save(explorer, out, "db-explorer", (900, 560)))
    await logic.enable_writes("local-app", Answer(Decision.CONFIRMED))
    explorer.sync_toggle()
    explorer.sql.setPlainText("UPDATE tickets SET status = 'closed' WHERE id = 1")
    written.append(await save(explorer, out, "db-explorer-writes-on", (900, 560)))
    written.append(await save(AuditView(broker.audit), out, "audit-log", (1100, 420)))
    written.append(await save(WorkspaceSettings(broker.home, "main"), out, "workspace-settings", (640, 480)))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="folder for the PNG files (created if missing)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = shoot(args.out)
    print(f"{len(written)} screenshot(s) in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
