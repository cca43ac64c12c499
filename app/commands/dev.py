"""``helm dev DIR``: author mode — the extension in a window on the user's own Helm home.
``helm dev --server S --app URI``: the same for an MCP App of a configured MCP server.

The workspace is the one named with ``--workspace``; without it, the only workspace there
is, or, in a home with none, a new workspace ``dev`` rooted at the extension folder (so a new
scaffold, which lists the workspace's Markdown files, has something to show at once).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, fail, home
from broker.settings import Home
from broker.workspaces import add_workspace

DEV_WORKSPACE = "dev"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "dev",
        help="open an extension in author mode: live reload, call inspector, manifest problems",
        description="Installs DIR into a workspace of your Helm home (by reference) and opens it "
        "with the real bridge, plugin review and write confirmation. Reloads when a file changes.",
    )
    p.add_argument("dir", type=Path, nargs="?", help="the extension folder (with manifest.json)")
    p.add_argument("--workspace", "-w", help="the workspace whose profiles and projects it uses")
    p.add_argument("--app", metavar="URI", help="instead of DIR: run this MCP App (its ui:// resource)")
    p.add_argument("--server", "-s", help="with --app: the MCP server that offers it")
    add_home_option(p)
    p.set_defaults(handler=_dev)


def choose_workspace(h: Home, requested: str | None, folder: Path) -> tuple[str, bool]:
    """The workspace to run in, and whether it was just created for author mode."""
    settings = h.settings()
    if requested is not None:
        settings.workspace(requested)  # raises SettingsError naming the missing workspace
        return requested, False
    names = sorted(settings.workspaces)
    if len(names) == 1:
        return names[0], False
    if not names:
        add_workspace(h, DEV_WORKSPACE, folder)
        return DEV_WORKSPACE, True
    fail(f"this Helm home has several workspaces; choose one with --workspace ({', '.join(names)})")


def _dev(args: argparse.Namespace) -> int:
    if args.app is not None or args.dir is None:
        return _app_dev(args)
    folder: Path = args.dir.expanduser().resolve()
    if not folder.is_dir():
        fail(f"{folder} is not a folder")
    workspace, created = choose_workspace(home(args), args.workspace, folder)
    if created:
        print(f"created workspace {workspace!r} rooted at {folder} for author mode")
    from app.devmode import run_dev  # Qt is imported only when a window opens

    return run_dev(args, workspace, folder)


def _app_dev(args: argparse.Namespace) -> int:
    if args.app is None or args.server is None or args.dir is not None:
        fail("give an extension folder, or --server S --app URI for an MCP App")
    workspace, created = choose_workspace(home(args), args.workspace, Path.cwd())
    if created:
        print(f"created workspace {workspace!r} rooted at {Path.cwd()} for author mode")
    from app.appdev import run_app_dev  # Qt is imported only when a window opens

    return run_app_dev(args, workspace)
