"""``helm dev DIR``: author mode — the extension in a window on the user's own Helm home.
``helm dev --server S --app URI``: the same for an MCP App of a configured MCP server.

The workspace is the one named with ``--workspace``; without it, the only workspace there
is, or, in a home with none, a new workspace ``dev`` rooted at the extension folder (so a new
scaffold, which lists the workspace's Markdown files, has something to show at once). With
several, it stops and lists them. A missing or invalid manifest, or an unreadable fixture, stops
``helm dev`` at once with every problem and exit code 1, before any window opens.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, fail, home, home_path
from broker.authoring.fixtures import FixtureBook
from broker.errors import ManifestError
from broker.manifest import MANIFEST_FILE, Manifest
from broker.manifest import load as load_manifest
from broker.policy import decide as policy_decide
from broker.policy import in_force
from broker.settings import Home
from broker.visible import visible
from broker.workspaces import add_workspace

DEV_WORKSPACE = "dev"


def register(sub: Any) -> None:
    p = sub.add_parser(
        "dev",
        help="open an extension in author mode: live reload, call inspector, manifest problems",
        description="Installs DIR into a workspace of your Helm home (by reference) and opens it "
        "with the real bridge, plugin review and write confirmation. Reloads when a file changes. "
        "Every reload, lint problem, call and console message is also a line on the terminal.",
    )
    p.add_argument("dir", type=Path, nargs="?", help="the extension folder (with manifest.json)")
    p.add_argument("--workspace", "-w", help="the workspace whose profiles and projects it uses")
    p.add_argument("--verbose", action="store_true", help="also show the web engine's and Qt's own messages")
    p.add_argument("--devtools", action="store_true", help="open Chromium DevTools on the page")
    p.add_argument(
        "--yes-dev",
        action="store_true",
        help="approve manifest changes on the terminal, printing what changed "
        "(only in the workspace helm dev created for itself)",
    )
    fixtures = p.add_mutually_exclusive_group()
    fixtures.add_argument("--record", type=Path, metavar="FIXTURES", help="save each call's envelope there")
    fixtures.add_argument(
        "--replay", type=Path, metavar="FIXTURES", help="answer every call from there: no profile or server"
    )
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
        add_workspace(h, DEV_WORKSPACE, folder, author_mode=True)
        return DEV_WORKSPACE, True
    fail(f"this Helm home has several workspaces; choose one with --workspace ({', '.join(names)})")


def checked_manifest(folder: Path) -> Manifest:
    """The manifest, or every problem on stderr and exit code 1."""
    if not (folder / MANIFEST_FILE).exists():
        fail(f"{folder} has no {MANIFEST_FILE}: give the extension's folder (helm ext new DIR makes one)")
    try:
        return load_manifest(folder)
    except ManifestError as exc:
        for issue in exc.issues:
            print(visible(f"{issue.path}: {issue.message}"), file=sys.stderr)
        fail(f"{len(exc.issues)} problem(s) in {folder / MANIFEST_FILE}: fix them, then try again")


def checked_fixtures(folder: Path) -> FixtureBook:
    book = FixtureBook(folder.expanduser().resolve())
    problems = book.problems()
    for problem in problems:
        print(visible(problem), file=sys.stderr)
    if problems:
        fail(f"{len(problems)} problem(s) in the fixtures in {book.folder}")
    return book


def _dev(args: argparse.Namespace) -> int:
    refusal = policy_decide.dev_mode(in_force())
    if refusal is not None:
        fail(f"author mode cannot start: {refusal.message}")
    if args.app is not None or args.dir is None:
        return _app_dev(args)
    folder: Path = args.dir.expanduser().resolve()
    if not folder.is_dir():
        fail(f"{folder} is not a folder")
    checked_manifest(folder)
    from app.devmode import DevRun, run_dev, run_replay  # Qt is imported only when a window opens
    from ui.dev.window import DevOptions

    if args.replay is not None:
        if args.workspace is not None:
            fail("--replay runs in a temporary Helm home of its own: leave out --workspace")
        options = DevOptions(yes=args.yes_dev, devtools=args.devtools)
        return run_replay(folder, checked_fixtures(args.replay), options, args.verbose)
    h = home(args)
    workspace, created = choose_workspace(h, args.workspace, folder)
    if created:
        print(f"created workspace {workspace!r} rooted at {folder} for author mode")
    if args.yes_dev and not h.settings().workspace(workspace).author_mode:
        fail(
            f"--yes-dev approves only in the workspace helm dev created for itself; {workspace!r} is "
            "not one: approve in the dev window, or run helm dev in a home without workspaces"
        )
    record = None
    if args.record is not None:
        args.record.mkdir(parents=True, exist_ok=True)
        record = checked_fixtures(args.record)
    options = DevOptions(yes=args.yes_dev, devtools=args.devtools, record=record)
    return run_dev(DevRun(folder, workspace, home_path(args), options), args.verbose)


def _app_dev(args: argparse.Namespace) -> int:
    if args.app is None or args.server is None or args.dir is not None:
        fail("give an extension folder, or --server S --app URI for an MCP App")
    workspace, created = choose_workspace(home(args), args.workspace, Path.cwd())
    if created:
        print(f"created workspace {workspace!r} rooted at {Path.cwd()} for author mode")
    from app.appdev import run_app_dev  # Qt is imported only when a window opens
    from app.enginelog import quiet_engine, stderr_lines

    quiet_engine(args.verbose, stderr_lines())  # the engine's own lines only with --verbose
    return run_app_dev(args, workspace)
