"""``helm project add|list``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.commands.common import add_home_option, home, print_json
from app.commands.workspace import HOLDS_HOME
from broker.fs.guard import folder_holds
from broker.workspaces import add_project


def register(sub: Any) -> None:
    p = sub.add_parser("project", help="register projects in a workspace")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser("add", help="register a project folder under an id")
    add.add_argument("--workspace", "-w", required=True)
    add.add_argument("id")
    add.add_argument("path", type=Path)
    add_home_option(add)
    add.set_defaults(handler=_add)
    ls = s.add_parser("list", help="list a workspace's projects")
    ls.add_argument("--workspace", "-w", required=True)
    ls.add_argument("--json", action="store_true")
    add_home_option(ls)
    ls.set_defaults(handler=_list)


def _add(args: argparse.Namespace) -> int:
    h = home(args)
    folder = add_project(h, args.workspace, args.id, args.path)
    print(f"project {args.id} added at {folder}")
    if folder_holds(folder, h.path):
        print(HOLDS_HOME.format(what="this project folder", home=h.path), file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    ws = home(args).settings().workspace(args.workspace)
    rows = [
        {"id": pid, "path": str(path), "available": path.is_dir()}
        for pid, path in sorted(ws.projects.items())
    ]
    if args.json:
        print_json(rows)
    else:
        for r in rows:
            print(f"{r['id']}\t{r['path']}" + ("" if r["available"] else "\t(missing)"))
    return 0
