"""``helm service add|list|remove|connect|disconnect``: service profiles for http connections.

Secrets (the token, the OAuth2 client secret) are read from a prompt or stdin, never argv.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from broker.errors import ProfileError
from broker.kinds.cli import CliIO, Row, add_list, add_remove, store_of
from broker.kinds.http import HTTP
from broker.kinds.http.connect import ConnectError, connect_status
from broker.kinds.http.profiles import SERVICES, ServiceProfile


def register(sub: Any, io: CliIO) -> None:
    p = sub.add_parser("service", help="service profiles for http connections (token or OAuth2)")
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _register_add(s, io)
    add_list(s, io, "list service profiles", lambda args: _rows(io, args), _line,
             "no services (add one with: helm service add NAME --base-url URL)")  # fmt: skip
    add_remove(s, io, SERVICES, "service", "remove a profile and its secrets")
    _register_sign_in(s, io)


def _register_add(s: Any, io: CliIO) -> None:
    add = s.add_parser(
        "add",
        help="add or replace a service profile",
        description="The token (or, with --oauth2, the client secret) is read from the prompt or stdin.",
    )
    add.add_argument("name")
    add.add_argument("--base-url", required=True, help="https URL (http only for 127.0.0.1/localhost)")
    add.add_argument("--token-header", default="Authorization", help="header for the token")
    add.add_argument("--token-format", choices=["bearer", "raw"], default="bearer")
    add.add_argument("--no-token", action="store_true", help="a public API: send no token")
    add.add_argument("--oauth2", action="store_true", help="sign in with OAuth2 instead of a token")
    add.add_argument("--client-id", help="the OAuth2 client id (with --oauth2)")
    add.add_argument(
        "--authorize-url", metavar="URL", help="the service's OAuth2 authorization endpoint (with --oauth2)"
    )
    add.add_argument("--token-url", metavar="URL", help="the service's OAuth2 token endpoint (with --oauth2)")
    io.add_home_option(add)
    add.set_defaults(handler=lambda args: _add(io, args))


def _register_sign_in(s: Any, io: CliIO) -> None:
    co = s.add_parser(
        "connect",
        help="sign in to an OAuth2 service for a workspace",
        description="Asks for the scopes the workspace's enabled extensions declare for the service.",
    )
    co.add_argument("name")
    co.add_argument("--workspace", "-w", required=True)
    co.add_argument("--no-browser", action="store_true", help="print the sign-in URL instead of opening it")
    co.add_argument("--wait", type=float, default=300.0, metavar="SECONDS", help="how long to wait")
    io.add_home_option(co)
    co.set_defaults(handler=lambda args: _connect(io, args))
    dc = s.add_parser("disconnect", help="forget an OAuth2 sign-in (the profile stays)")
    dc.add_argument("name")
    io.add_home_option(dc)
    dc.set_defaults(handler=lambda args: _disconnect(io, args))


def _add(io: CliIO, args: argparse.Namespace) -> int:
    try:
        return _add_profile(io, args)
    except ProfileError as exc:
        io.fail(str(exc))


def _add_profile(io: CliIO, args: argparse.Namespace) -> int:
    store = store_of(io, args, SERVICES)
    secrets: dict[str, str | None] = {}
    if args.oauth2:
        missing = [opt for opt in ("client_id", "authorize_url", "token_url") if not getattr(args, opt)]
        if missing:
            io.fail("--oauth2 needs " + ", ".join("--" + m.replace("_", "-") for m in missing))
        profile = ServiceProfile(
            args.name, args.base_url, "oauth2", client_id=args.client_id,
            authorize_url=args.authorize_url, token_url=args.token_url,
        )  # fmt: skip
        store.check(profile)
        secrets["client_secret"] = io.read_secret(
            "Client secret (empty for a public client): ", allow_empty=True
        )
    else:
        if args.client_id or args.authorize_url or args.token_url:
            io.fail("--client-id, --authorize-url and --token-url go with --oauth2")
        profile = ServiceProfile(args.name, args.base_url, "token", args.token_header, args.token_format)
        store.check(profile)
        if not args.no_token:
            secrets["token"] = io.read_secret("Token: ")
    saved = store.save(profile, secrets)
    if saved.auth == "token" and not secrets:
        io.say(f"service {saved.name} saved with no token: its requests carry no credentials")
    else:
        io.say(f"service {saved.name} saved ({saved.auth}); secrets in {store.credentials.description}")
    if saved.auth == "oauth2":
        io.say(f"connect it with: helm service connect {saved.name} --workspace WORKSPACE")
    return 0


def _rows(io: CliIO, args: argparse.Namespace) -> list[Row]:
    store = store_of(io, args, SERVICES)
    rows = []
    for p in store.all():
        row: Row = {"name": p.name, "base_url": p.base_url, "auth": p.auth}
        if p.auth == "oauth2":
            row |= {"client_id": p.client_id, "authorize_url": p.authorize_url, "token_url": p.token_url,
                    "connection": connect_status(store.credentials, p.name)}  # fmt: skip
        else:
            row |= {"token_header": p.token_header, "token_format": p.token_format,
                    "token": store.has_secret(p.name, "token")}  # fmt: skip
        rows.append(row)
    return rows


def _line(row: Row) -> str:
    return f"{row['name']}\t{row['auth']}\t{row['base_url']}\t{_summary(row)}"


def _summary(row: Row) -> str:
    if row["auth"] != "oauth2":
        return f"{row['token_format']} token in {row['token_header']}" if row["token"] else "no token"
    if row["authorize_url"] is None or row["token_url"] is None:
        return "sign-in URLs not set: add the profile again with --authorize-url and --token-url"
    return f"{row['connection']['summary']}; sign-in at {row['authorize_url']}, token {row['token_url']}"


def _disconnect(io: CliIO, args: argparse.Namespace) -> int:
    async def go() -> int:
        async with io.open_broker(args) as broker:
            try:
                (await broker.kind(HTTP)).disconnect(args.name)
            except ConnectError as exc:
                io.fail(str(exc))
        io.say(f"service {args.name} disconnected; the profile stays")
        return 0

    return io.run(go())


def _connect(io: CliIO, args: argparse.Namespace) -> int:
    async def go() -> int:
        async with io.open_broker(args) as broker:
            try:
                session = await (await broker.kind(HTTP)).connect(args.name, args.workspace)
            except (ConnectError, ProfileError) as exc:
                io.fail(str(exc))
            async with session:
                io.say(f"redirect URI: {session.redirect_uri}")
                if args.no_browser:
                    io.say(f"open this URL to sign in: {session.authorize_url}")
                else:
                    io.say("opening the browser to sign in…")
                    await asyncio.to_thread(io.open_url, session.authorize_url)
                try:
                    grant = await session.wait(args.wait)
                except ConnectError as exc:
                    io.fail(str(exc))
        io.say(f"service {args.name} connected; scopes: {' '.join(grant.scopes) or '(none)'}")
        return 0

    try:
        return io.run(go())
    except KeyboardInterrupt:
        io.warn("sign-in cancelled")
        return 130
