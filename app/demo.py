"""The demo workspace: what a new user sees on the first ``helm``, with no account or server.

It is built from ``resources/demo`` into ``<home>/demo``: a workspace folder with notes, a
SQLite database created from the SQL Helm ships, a profile for Helm's own small MCP server
(started with this Python), and widgets for every kind a new user can try without signing in
anywhere. When ``tdt`` is installed the workspace is a real TDT workspace (``app.demo_tdt``) with
a TDT widget set — status, reminders, brain search, candidate review; else it uses Helm's TDT
stand-in, which says so. A sample project (``site``) carries software-production task files, and
the Task board tool lists them and starts a build of a ready task (``helm.orchestrate``), moving
it to doing — the agent that runs builds is the user's to choose, in the workspace's settings.
The extensions ship with Helm, so setting up the demo approves them; plugin review still shows
what each may do. They share one style sheet, ``resources/demo/look.css``: setting up the demo
copies it into each extension's folder, since a frame loads only its own extension's files.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import resources
from app.demo_tdt import find_tdt, make_tdt_workspace
from broker import Broker
from broker.extensions import install, review_and_approve
from broker.kinds import KINDS
from broker.mcp.profiles import MCP_SERVERS, StdioProfile
from broker.workspaces import DEMO_ROOT, add_project, add_workspace, set_everyday, set_tdt_command

WORKSPACE = "demo"
PROFILE = "helm-demo"
EXTENSIONS = ("tasks", "notes", "clock", "status", "reminders", "brain", "candidates")
"""The demo widgets, in the order the dashboard shows them."""
TOOLS = ("board",)
"""The demo tools (opened from the extension list): the task board starts builds."""
PROJECT = "site"
"""The demo's project: a sample site whose software-production tasks the task board shows."""

SOURCE = resources.path("demo")
LOOK = "look.css"
"""The demo extensions' shared style sheet, in ``SOURCE`` and in each installed extension."""


def _kinds_of(name: str) -> set[str]:
    manifest = json.loads((SOURCE / "extensions" / name / "manifest.json").read_text("utf-8"))
    return {str(c["kind"]) for c in manifest["connections"]}


def kinds() -> set[str]:
    """The kinds of connection the demo's widgets use."""
    return set().union(*(_kinds_of(name) for name in EXTENSIONS))


def widgets() -> tuple[str, ...]:
    """The demo widgets this Helm can run: those whose every kind is installed (a Helm built
    without a kind shows the rest of its demo)."""
    return tuple(name for name in EXTENSIONS if _kinds_of(name) <= set(KINDS))


def tools() -> tuple[str, ...]:
    """The demo tools this Helm can run."""
    return tuple(name for name in TOOLS if _kinds_of(name) <= set(KINDS))


def _save_database_profile(broker: Broker, database: Path) -> None:
    if "db" not in KINDS:
        return
    from broker.kinds.db.profiles import DATABASES, DbProfile  # the db kind's own

    DATABASES.store(broker.home, broker.credentials).save(DbProfile(PROFILE, "sqlite", path=str(database)))


def needs_demo(broker: Broker) -> bool:
    """True for a user with no workspace yet (the demo is the embedded default)."""
    return not broker.home.settings().workspaces


def create_database(sql: Path, target: Path) -> None:
    """Create the demo database from ``sql`` unless it already exists."""
    if target.exists():
        return
    partial = target.with_suffix(".tmp")
    partial.unlink(missing_ok=True)
    with sqlite3.connect(partial) as db:
        db.executescript(sql.read_text(encoding="utf-8"))
    db.close()
    partial.replace(target)


def server_command(script: str) -> list[str]:
    return [sys.executable, str(SOURCE / "servers" / script)]


async def set_up_demo(broker: Broker) -> str:
    """Build the demo under the Helm home and register it; returns the workspace name."""
    home = broker.home
    base = home.path / "demo"
    root = home.path.joinpath(*DEMO_ROOT)
    if not root.exists():
        shutil.copytree(SOURCE / "workspace", root)
    site = root / "work" / PROJECT
    if not site.exists():  # a demo made before the task board
        shutil.copytree(SOURCE / "workspace" / "work" / PROJECT, site)
    create_database(SOURCE / "data" / "tasks.sql", base / "tasks.db")
    extensions = base / "extensions"
    shown = widgets() + tools()
    for name in shown:
        shutil.copytree(SOURCE / "extensions" / name, extensions / name, dirs_exist_ok=True)
        shutil.copyfile(SOURCE / LOOK, extensions / name / LOOK)  # before install: in its digest
    _save_database_profile(broker, base / "tasks.db")
    MCP_SERVERS.store(home, broker.credentials).save(
        StdioProfile(PROFILE, tuple(server_command("demo_mcp.py")), None)
    )
    if WORKSPACE not in home.settings().workspaces:
        add_workspace(home, WORKSPACE, root)
    if PROJECT not in home.settings().workspace(WORKSPACE).projects:
        add_project(home, WORKSPACE, PROJECT, site)
    program = find_tdt()
    if program is not None and await asyncio.to_thread(make_tdt_workspace, program, root):
        set_tdt_command(home, WORKSPACE, None)  # tdt on PATH, as for any workspace
        set_everyday(home, WORKSPACE, True)
    else:
        set_tdt_command(home, WORKSPACE, server_command("demo_tdt.py"))
        set_everyday(home, WORKSPACE, False)
    for name in shown:
        manifest = install(home, WORKSPACE, extensions / name)
        await review_and_approve(broker, WORKSPACE, manifest.id)
    return WORKSPACE
