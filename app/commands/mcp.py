"""``helm mcp add|list|remove|tools``: the MCP servers extensions can call.

``add NAME --command CMD [--arg A]... [--token-env VAR]`` starts a stdio server; ``add NAME --url
URL`` talks streamable HTTP with a bearer token. A token is read from stdin or a prompt (never
argv); ``--no-token`` adds an HTTP server that needs none. ``tools NAME`` starts the server and
lists its tools — the same broker function as the Test button in Settings.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.commands.common import (
    add_home_option,
    credentials,
    fail,
    home,
    open_broker,
    print_json,
    read_secret,
    run,
)
from broker.errors import CallError
from broker.kinds.mcp import profiles
from broker.kinds.mcp.adapter import McpKind
from broker.visible import visible


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help="add, list, remove and test MCP servers")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser("add", help="add (or replace) an MCP server")
    add.add_argument("name")
    where = add.add_mutually_exclusive_group(required=True)
    where.add_argument("--command", metavar="CMD", help="program to start over stdio")
    where.add_argument("--url", help="streamable HTTP endpoint (https; http only on 127.0.0.1/localhost)")
    add.add_argument("--arg", action="append", default=[], metavar="A", help="one argument (repeat)")
    add.add_argument("--token-env", metavar="VAR", help="stdio: the variable that receives the token")
    add.add_argument("--no-token", action="store_true", help="HTTP: the server needs no token")
    add_home_option(add)
    add.set_defaults(handler=_add)
    ls = s.add_parser("list", help="list MCP servers")
    ls.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(ls)
    ls.set_defaults(handler=_list)
    rm = s.add_parser("remove", help="remove an MCP server and its stored token")
    rm.add_argument("name")
    add_home_option(rm)
    rm.set_defaults(handler=_remove)
    tools = s.add_parser("tools", help="start the server and list its tools")
    tools.add_argument("name")
    tools.add_argument("--workspace", "-w", help="run it as in this workspace (default: the first one)")
    tools.add_argument("--json", action="store_true", help="print JSON")
    add_home_option(tools)
    tools.set_defaults(handler=_tools)


def _add(args: argparse.Namespace) -> int:
    raw: dict[str, Any]
    token: str | None = None
    if args.command is not None:
        if args.no_token:
            fail("--no-token is for --url servers; a stdio server gets a token only with --token-env")
        raw = {"command": [args.command, *args.arg], "token_env": args.token_env}
    else:
        if args.arg or args.token_env:
            fail("--arg and --token-env are for --command servers")
        raw = {"url": args.url, "auth": "none" if args.no_token else "bearer"}
    profiles.check_name(args.name)
    profiles.parse(args.name, raw)  # report a wrong profile before asking for a secret
    if args.token_env:
        token = read_secret(f"Token for {args.name} (put in ${args.token_env}): ")
    elif args.url and not args.no_token:
        token = read_secret(f"Bearer token for {args.name}: ")
    profiles.add(home(args), credentials(args), args.name, raw, token)
    print(f"MCP server {args.name} saved" + (" (token in the credential store)" if token else ""))
    return 0


def _describe(raw: dict[str, Any]) -> str:
    if "url" in raw:
        return f"{raw['url']}  (auth: {raw.get('auth', 'bearer')})"
    command = " ".join(str(a) for a in raw.get("command", []))
    return command + (f"  (token in ${raw['token_env']})" if raw.get("token_env") else "")


def _list(args: argparse.Namespace) -> int:
    servers = home(args).settings().mcp_servers
    if args.json:
        print_json([{"name": n, **raw} for n, raw in sorted(servers.items())])
    elif not servers:
        print("no MCP servers (add one with: helm mcp add NAME --command CMD or --url URL)")
    for name, raw in [] if args.json else sorted(servers.items()):
        print(f"{name}\t{_describe(raw)}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    profiles.remove(home(args), credentials(args), args.name)
    print(f"MCP server {args.name} removed")
    return 0


def _tools(args: argparse.Namespace) -> int:
    settings = home(args).settings()
    if args.workspace is not None:
        workspace = settings.workspace(args.workspace)
    elif settings.workspaces:
        workspace = next(iter(settings.workspaces.values()))
    else:
        fail("add a workspace first (the server runs in a workspace): helm workspace add NAME ROOT")

    async def body() -> int:
        async with open_broker(args) as broker:
            kind = broker.adapter("mcp")
            assert isinstance(kind, McpKind)
            try:
                tools = await kind.list_tools(workspace, args.name)
            except CallError as err:
                fail(f"{err.code.value}: {err.message}")
        if args.json:
            print_json([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
        for tool in [] if args.json else tools:
            first_line = (tool.description or "").strip().splitlines()[:1]
            print(visible(f"{tool.name}\t{first_line[0] if first_line else ''}"))  # the server's words
        return 0

    return run(body())
