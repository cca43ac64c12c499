"""``helm app list|add|test``: MCP Apps — a server's interactive UIs, run in Helm's sandbox.

``list --server S`` shows the server's ``ui://`` resources and the tools linked to each.
``add --workspace W --server S URI`` shows the review (the HTML's sha256, the tools the app may
call with writes marked, what the resource declares) and asks y/N, default No; declared
resource domains stay blocked unless named with ``--allow-resource-domain``, and a tool Helm
would confirm is marked as only reading with ``--read TOOL``. An added app is an
extension: ``helm ext list|disable|remove`` manage it. ``test --server S URI`` opens the app
headless as the dashboard does, saving nothing (``app.apptest``).
"""

from __future__ import annotations

import argparse
from collections.abc import Coroutine
from typing import Any

from app import apptest
from app.commands.common import add_home_option, ask_yes_no, fail, home, open_broker, print_json, run
from broker.apps import review
from broker.apps.errors import AppError
from broker.broker import Broker
from broker.errors import CallError
from broker.mcp import discovery
from broker.visible import one_line as shown


def register(sub: Any) -> None:
    p = sub.add_parser("app", help="list, add and test MCP Apps (interactive UIs of MCP servers)")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = s.add_parser("list", help="list the UI resources of an MCP server and their tools")
    ls.add_argument("--server", "-s", required=True, help="the MCP server (helm mcp list)")
    ls.add_argument("--workspace", "-w", help="run the server as in this workspace (default: the first)")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    add = s.add_parser("add", help="review an app and add it to a workspace")
    add.add_argument("uri", help="the app's ui:// resource")
    add.add_argument("--server", "-s", required=True, help="the MCP server (helm mcp list)")
    add.add_argument("--workspace", "-w", required=True)
    add.add_argument(
        "--allow-resource-domain",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="allow one declared resource domain (images, fonts, styles, scripts); repeat",
    )
    add.add_argument(
        "--read",
        action="append",
        default=[],
        metavar="TOOL",
        help="mark a tool Helm would confirm as one that only reads (no confirmation); repeat",
    )
    add_home_option(add)
    add.set_defaults(handler=_add)
    apptest.register(s)


def _workspace(args: argparse.Namespace) -> str:
    settings = home(args).settings()
    if args.workspace is not None:
        return str(settings.workspace(args.workspace).name)
    if not settings.workspaces:
        fail("add a workspace first (the server runs in a workspace): helm workspace add NAME ROOT")
    return next(iter(settings.workspaces))


def _list(args: argparse.Namespace) -> int:
    workspace = _workspace(args)

    async def body() -> int:
        async with open_broker(args) as broker:
            apps = await _call(discovery.list_apps(broker, workspace, args.server))
        if args.json:
            print_json([_app_json(a) for a in apps])
            return 0
        if not apps:
            print(f"MCP server {shown(args.server)} offers no apps")
        for a in apps:
            print(f"{shown(a.uri)}\t{shown(a.name)}")
            for t in a.linked:
                mark = ("WRITE" if t.write else "read ") if t.for_app else "not for the app:"
                print(f"  {mark} {shown(t.name)}")
        return 0

    return run(body())


def _app_json(a: discovery.UiApp) -> dict[str, Any]:
    return {
        "uri": a.uri,
        "name": a.name,
        "description": a.description,
        "tools": [
            {"name": t.name, "visibility": list(t.visibility), "write": t.write, "forApp": t.for_app}
            for t in a.linked
        ],
    }


def _add(args: argparse.Namespace) -> int:
    async def body() -> int:
        async with open_broker(args) as broker:
            return await _review_and_add(broker, args)

    return run(body())


async def _review_and_add(broker: Broker, args: argparse.Namespace) -> int:
    reviewed = await _call(review.review(broker, args.workspace, args.server, args.uri))
    for line in review.lines(reviewed):
        print(line)
    for domain in args.allow_resource_domain:
        print(f"  you allow resource domain {shown(domain)}")
    for domain in sorted(set(reviewed.allowed) - set(args.allow_resource_domain)):
        print(f"  no longer allowed: resource domain {shown(domain)} (--allow-resource-domain keeps it)")
    for tool in args.read:
        print(f"  you mark tool {shown(tool)} as only reading: its calls are not confirmed")
    for tool in sorted(set(reviewed.marked) - set(args.read)):
        print(f"  no longer marked as only reading: tool {shown(tool)} (--read keeps it)")
    try:
        reviewed.spec(args.allow_resource_domain, args.read)  # a wrong --read is refused before y/N
    except AppError as err:
        fail(shown(str(err)))
    if not ask_yes_no(f"Add {shown(reviewed.name)} to workspace {shown(args.workspace)}?"):
        print("not added")
        return 1
    manifest = await _call(review.add(broker, reviewed, args.allow_resource_domain, args.read))
    print(f"added and approved {shown(manifest.id)} in workspace {shown(args.workspace)}")
    return 0


async def _call[T](work: Coroutine[Any, Any, T]) -> T:
    try:
        result: T = await work
    except CallError as err:
        fail(shown(f"{err.code.value}: {err.message}"))
    except AppError as err:
        fail(shown(str(err)))
    return result
