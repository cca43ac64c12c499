"""``helm mcp add|list|remove|tools``: the MCP servers extensions can call.

``add NAME --command CMD [--arg A]... [--token-env VAR]`` (or ``add NAME [--token-env VAR] -- CMD
ARG...``, the whole command line after ``--``) starts a stdio server; ``add NAME --url
URL`` talks streamable HTTP with a bearer token. A token is read from stdin or a prompt (never
argv); ``--no-token`` adds an HTTP server that needs none. ``tools NAME`` starts the server and
lists its tools — the same broker function as the Test button in Settings.
"""

from __future__ import annotations

import argparse
from typing import Any

from broker.errors import CallError
from broker.kinds.cli import CliIO, Row, add_list, add_remove, store_of
from broker.kinds.mcp import MCP
from broker.mcp.profiles import MCP_SERVERS, Profile


def register(sub: Any, io: CliIO) -> None:
    p = sub.add_parser("mcp", help="add, list and remove MCP servers, and list a server's tools")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = s.add_parser(
        "add", help="add (or replace) an MCP server",
        epilog="Or give the whole command line after --: helm mcp add NAME [--token-env VAR] -- CMD ARG...",
    )  # fmt: skip
    add.add_argument("name")
    where = add.add_mutually_exclusive_group()
    where.add_argument("--command", metavar="CMD", help="program to start over stdio")
    where.add_argument("--url", help="streamable HTTP endpoint (https; http only on 127.0.0.1/localhost)")
    add.add_argument("--arg", action="append", default=[], metavar="A", help="one argument (repeat)")
    add.set_defaults(command_line=[])  # the words after a bare --, if any (app.cli)
    add.add_argument("--token-env", metavar="VAR", help="stdio: the variable that receives the token")
    add.add_argument("--no-token", action="store_true", help="HTTP: the server needs no token")
    add.add_argument(
        "--pass-env", action="append", default=[], metavar="VAR",
        help="stdio: also pass this variable of Helm's environment (repeat; certificates and proxies "
        "always are)",
    )  # fmt: skip
    io.add_home_option(add)
    add.set_defaults(handler=lambda args: _add(io, args))
    add_list(s, io, "list MCP servers", lambda args: _rows(io, args), _line,
             "no MCP servers (add one with: helm mcp add NAME --command CMD or --url URL)")  # fmt: skip
    add_remove(s, io, MCP_SERVERS, "MCP server", "remove an MCP server and its stored token")
    tools = s.add_parser("tools", help="start the server and list its tools")
    tools.add_argument("name")
    tools.add_argument("--workspace", "-w", help="run it as in this workspace (default: the first one)")
    tools.add_argument("--json", action="store_true", help="print JSON")
    io.add_home_option(tools)
    tools.set_defaults(handler=lambda args: _tools(io, args))


def _command(io: CliIO, args: argparse.Namespace) -> list[str] | None:
    """The stdio command line: after ``--``, or ``--command`` with its ``--arg``s; None for a URL."""
    if args.command_line:
        if args.command is not None or args.url is not None or args.arg:
            io.fail("give the server's command line once: after --, or with --command and --arg")
        return list(args.command_line)
    if args.command is None and args.url is None:
        io.fail("say how to reach the server: --command CMD, --url URL, or -- CMD ARG...")
    return None if args.command is None else [args.command, *args.arg]


def _profile(io: CliIO, args: argparse.Namespace) -> Profile:
    command = _command(io, args)
    if command is not None:
        if args.no_token:
            io.fail("--no-token is for --url servers; a stdio server gets a token only with --token-env")
        raw: dict[str, Any] = {"command": command, "token_env": args.token_env, "pass_env": args.pass_env}
    else:
        if args.arg or args.token_env or args.pass_env:
            io.fail("--arg, --token-env and --pass-env are for --command servers")
        raw = {"url": args.url, "auth": "none" if args.no_token else "bearer"}
    return MCP_SERVERS.parse(args.name, raw)


def _add(io: CliIO, args: argparse.Namespace) -> int:
    """A wrong profile is a ProfileError (exit 3), reported before asking for a secret."""
    store = store_of(io, args, MCP_SERVERS)
    profile = store.check(_profile(io, args))
    token: str | None = None
    if args.token_env:
        token = io.read_secret(f"Token for {args.name} (put in ${args.token_env}): ")
    elif args.url and not args.no_token:
        token = io.read_secret(f"Bearer token for {args.name}: ")
    store.save(profile, {"token": token})
    io.say(f"MCP server {args.name} saved" + (" (token in the credential store)" if token else ""))
    return 0


def _rows(io: CliIO, args: argparse.Namespace) -> list[Row]:
    store = store_of(io, args, MCP_SERVERS)
    return [{"name": name, **(store.raw(name) or {})} for name in store.names()]


def _line(row: Row) -> str:
    if "url" in row:
        return f"{row['name']}\t{row['url']}  (auth: {row.get('auth', 'bearer')})"
    command = " ".join(str(a) for a in row.get("command", []))
    token = f"  (token in ${row['token_env']})" if row.get("token_env") else ""
    passed = f"  (also passes {', '.join(row['pass_env'])})" if row.get("pass_env") else ""
    return f"{row['name']}\t{command}{token}{passed}"


def _tools(io: CliIO, args: argparse.Namespace) -> int:
    settings = io.home(args).settings()
    if args.workspace is not None:
        workspace = settings.workspace(args.workspace)
    elif settings.workspaces:
        workspace = next(iter(settings.workspaces.values()))
    else:
        io.fail("add a workspace first (the server runs in a workspace): helm workspace add NAME ROOT")

    async def body() -> int:
        async with io.open_broker(args) as broker:
            try:
                tools = await (await broker.kind(MCP)).list_tools(workspace, args.name)
            except CallError as err:
                io.fail(f"{err.code.value}: {err.message}" + (f"\n{err.detail}" if err.detail else ""))
        if args.json:
            io.print_json([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
        for tool in [] if args.json else tools:
            first_line = (tool.description or "").strip().splitlines()[:1]
            io.say(f"{tool.name}\t{first_line[0] if first_line else ''}")  # the server's words
        return 0

    return io.run(body())
