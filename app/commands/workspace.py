"""``helm workspace add|list|everyday|tdt-command|build-agent``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, home, print_json
from broker.fs.guard import folder_holds
from broker.workspaces import add_workspace, set_build_agent, set_everyday, set_tdt_command

HOLDS_HOME = (
    "warning: {what} contains Helm's own folder {home}. Helm never gives extensions access to it, "
    "but a narrower folder is safer."
)


def register(sub: Any) -> None:
    p = sub.add_parser("workspace", help="add and list workspaces")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser("add", help="add a workspace rooted at an existing folder")
    add.add_argument("name")
    add.add_argument("root", type=Path)
    add_home_option(add)
    add.set_defaults(handler=_add)
    ls = s.add_parser("list", help="list workspaces")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    ev = s.add_parser("everyday", help="turn the everyday profile (TDT write tools) on or off")
    ev.add_argument("name")
    ev.add_argument("state", choices=["on", "off"])
    add_home_option(ev)
    ev.set_defaults(handler=_everyday)
    tdt = s.add_parser(
        "tdt-command",
        help="the program that runs this workspace's TDT server",
        description="Name the tdt executable and any wrapper arguments only: Helm adds "
        "--workspace <root> mcp serve --profile read-only|everyday itself.",
    )
    tdt.add_argument("name")
    tdt.add_argument(
        "argv", nargs="*", metavar="ARG", help="the program and wrapper arguments (none: tdt on PATH)"
    )
    add_home_option(tdt)
    tdt.set_defaults(handler=_tdt_command)
    build = s.add_parser(
        "build-agent",
        help="the agent that runs the builds tools start in this workspace",
        description="Name an agent profile (helm agent list); --none: no agent runs builds here.",
    )
    build.add_argument("name")
    who = build.add_mutually_exclusive_group(required=True)
    who.add_argument("agent", nargs="?", help="the agent profile's name")
    who.add_argument("--none", action="store_true", help="no agent runs builds here")
    add_home_option(build)
    build.set_defaults(handler=_build_agent)


def _add(args: argparse.Namespace) -> int:
    h = home(args)
    ws = add_workspace(h, args.name, args.root)
    print(f"workspace {ws.name} added at {ws.root}")
    if folder_holds(ws.root, h.path):
        print(HOLDS_HOME.format(what="this workspace root", home=h.path), file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    settings = home(args).settings()
    rows: list[dict[str, Any]] = [
        {
            "name": ws.name,
            "root": str(ws.root),
            "projects": sorted(ws.projects),
            "extensions": sorted(ws.extensions),
            "everyday": ws.everyday,
            "build_agent": ws.build_agent,
        }
        for ws in settings.workspaces.values()
    ]
    if args.json:
        print_json(rows)
    elif not rows:
        print("no workspaces (add one with: helm workspace add NAME ROOT)")
    for r in [] if args.json else rows:
        print(f"{r['name']}\t{r['root']}\tprojects: {len(r['projects'])}\textensions: {len(r['extensions'])}")
    return 0


def _everyday(args: argparse.Namespace) -> int:
    set_everyday(home(args), args.name, args.state == "on")
    print(f"everyday profile {args.state} for {args.name}")
    return 0


def _tdt_command(args: argparse.Namespace) -> int:
    set_tdt_command(home(args), args.name, list(args.argv) or None)
    shown = " ".join(args.argv) if args.argv else "tdt on PATH (the default)"
    print(f"TDT program for {args.name}: {shown} (Helm adds --workspace, mcp serve and --profile)")
    return 0


def _build_agent(args: argparse.Namespace) -> int:
    agent = None if args.none else args.agent
    set_build_agent(home(args), args.name, agent)
    print(f"builds in {args.name} run with: {agent}" if agent else f"no agent runs builds in {args.name}")
    return 0
